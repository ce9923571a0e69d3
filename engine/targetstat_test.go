package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TargetStat hands a hook the Lstat that resolving the call's target made,
// when resolving made one it can stand for: the file's, or its absence,
// for a path whose directory is open; nothing for a path through a
// symlink, which the hook then looks up itself.
func TestTargetStat(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "src", "link.txt")); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	call := func(path string) *Call {
		return &Call{ID: "1", Tool: "write_to_file", WS: w, Args: []byte(`{"path":"` + path + `"}`)}
	}
	// Before src/ is open, resolving walks it: no Lstat to hand on.
	if _, ok, _ := call("src/a.txt").TargetStat(); ok {
		t.Fatal("a stat before the directory was open")
	}
	if _, err := w.Edit(call("src/b.txt"), "src/b.txt", func([]byte, bool) ([]byte, error) { return []byte("b\n"), nil }); err != nil {
		t.Fatal(err)
	}
	fi, ok, err := call("src/a.txt").TargetStat()
	if !ok || err != nil || fi == nil || fi.Size() != 2 || !fi.Mode().IsRegular() {
		t.Fatalf("src/a.txt: %v %v %v", fi, ok, err)
	}
	if fi, ok, err := call("src/new.txt").TargetStat(); !ok || !errors.Is(err, fs.ErrNotExist) || fi != nil {
		t.Fatalf("src/new.txt: %v %v %v", fi, ok, err)
	}
	c := call("src/link.txt")
	if rel, _, err := c.Target(); err != nil || rel != "src/a.txt" {
		t.Fatalf("src/link.txt resolves to %q, %v", rel, err)
	}
	if _, ok, _ := c.TargetStat(); ok {
		t.Fatal("a stat for a path through a symlink")
	}
	if _, ok, _ := call("../x").TargetStat(); ok {
		t.Fatal("a stat for a refused path")
	}
}
