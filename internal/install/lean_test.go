package install

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// install writes intentgate-hook where it lies beside the intentgate the
// hooks would run, by name when PATH finds that very file, and recognizes
// both forms as its own.
func TestLeanHookBesideIntentgate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := func(p string) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe(filepath.Join(bin, "intentgate"))
	o := &Options{Command: filepath.Join(bin, "intentgate")}
	if got := o.leanHook(); got != "" {
		t.Errorf("leanHook() without intentgate-hook = %q, want \"\"", got)
	}
	exe(filepath.Join(bin, "intentgate-hook"))
	t.Setenv("PATH", os.Getenv("PATH")) // restored after the test
	os.Setenv("PATH", t.TempDir())
	if got, want := o.leanHook(), filepath.Join(bin, "intentgate-hook"); got != want {
		t.Errorf("leanHook() = %q, want %q", got, want)
	}
	o.lean = o.leanHook()
	if got, want := o.hookCommand("claude-code"), filepath.Join(bin, "intentgate-hook")+" claude-code"; got != want {
		t.Errorf("hookCommand = %q, want %q", got, want)
	}
	os.Setenv("PATH", bin)
	o2 := &Options{Command: "intentgate", Global: true}
	o2.lean = o2.leanHook()
	if got, want := o2.hookCommand("codex"), "intentgate-hook codex --only-governed"; got != want {
		t.Errorf("hookCommand = %q, want %q", got, want)
	}
	// A linked intentgate: the program beside the link's target counts.
	other := t.TempDir()
	if err := os.Symlink(filepath.Join(bin, "intentgate"), filepath.Join(other, "intentgate")); err != nil {
		t.Fatal(err)
	}
	o3 := &Options{Command: filepath.Join(other, "intentgate")}
	if got, want := o3.leanHook(), filepath.Join(bin, "intentgate-hook"); got != want {
		t.Errorf("leanHook() through a link = %q, want %q", got, want)
	}
	// Not executable: not used.
	if err := os.Chmod(filepath.Join(bin, "intentgate-hook"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := o.leanHook(); got != "" {
		t.Errorf("leanHook() with a non-executable intentgate-hook = %q", got)
	}
	ours := o.oursCommand("gemini")
	for cmd, want := range map[string]bool{
		"intentgate hook gemini":                            true,
		"intentgate-hook gemini":                            true,
		"'/opt/x y/intentgate-hook' gemini --only-governed": true,
		"/usr/bin/intentgate-hook.exe gemini":               true,
		"intentgate-hook codex":                             false,
		"evil-hook gemini":                                  false,
		"sh -c 'intentgate-hook gemini'":                    false,
	} {
		if got := ours(cmd); got != want {
			t.Errorf("oursCommand(gemini)(%q) = %v, want %v", cmd, got, want)
		}
	}
}
