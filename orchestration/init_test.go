package orchestration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []InitStep{
		{Path: filepath.Join(dir, ".orchestration", "active_intents.yaml"), Created: true},
		{Path: filepath.Join(dir, ".intentignore"), Created: true},
		{Path: filepath.Join(dir, ".gitattributes"), Added: 1, Lines: true},
		{Path: filepath.Join(dir, ".gitignore"), Added: 10, Lines: true},
	}
	if len(steps) != len(want) {
		t.Fatalf("Init = %+v, want %+v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, steps[i], want[i])
		}
	}
	// The example intents load, and the .gitignore kept its line.
	if set, err := LoadIntents(filepath.Join(dir, ".orchestration", "active_intents.yaml")); err != nil || len(set.Intents) != 1 {
		t.Errorf("example intents: %v", err)
	}
	gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if !strings.HasPrefix(string(gi), "node_modules/\n# intentgate\n.orchestration/sessions/\n") {
		t.Errorf(".gitignore = %q", gi)
	}

	// Again: nothing is overwritten or added; an edited file stays.
	if err := os.WriteFile(filepath.Join(dir, ".intentignore"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps, err = Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.Created || st.Added != 0 {
			t.Errorf("second Init changed %+v", st)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".intentignore")); string(b) != "mine\n" {
		t.Errorf(".intentignore = %q, want it kept", b)
	}
}
