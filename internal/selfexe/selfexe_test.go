package selfexe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIntentgateOf(t *testing.T) {
	with, without := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(with, Exe(Name)), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ self, want string }{
		{filepath.Join(with, Exe(Name)), filepath.Join(with, Exe(Name))},
		{filepath.Join(with, Exe(HookName)), filepath.Join(with, Exe(Name))},
		{filepath.Join(with, Exe(FullName)), filepath.Join(with, Exe(Name))},
		// intentgate-full alone runs every command itself.
		{filepath.Join(without, Exe(FullName)), filepath.Join(without, Exe(FullName))},
		// intentgate-hook has no other command: it names the intentgate of
		// its installation even before that is there.
		{filepath.Join(without, Exe(HookName)), filepath.Join(without, Exe(Name))},
		{filepath.Join(with, "other"), filepath.Join(with, "other")},
	} {
		if got := IntentgateOf(tc.self); got != tc.want {
			t.Errorf("IntentgateOf(%q) = %q, want %q", tc.self, got, tc.want)
		}
	}
}

func TestBeside(t *testing.T) {
	dir := t.TempDir()
	got := Beside(filepath.Join(dir, Exe(HookName)))
	want := []string{filepath.Join(dir, Exe(Name)), filepath.Join(dir, Exe(FullName))}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Beside = %q, want %q", got, want)
	}
}
