//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The directories a write goes through are kept open from one call to the
// next. A directory swapped between two calls (moved out of the workspace
// with a symlink left in its place, or replaced by another directory) must
// be seen at the next call: nothing is written outside, and a real
// directory put in the old one's place is the one written to.
func TestCachedDirectoriesSeeSwapsBetweenCalls(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(filepath.Join(ws, "src", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(rel, body string) error {
		_, err := w.Edit(&Call{ID: "1", Tool: "w", WS: w}, rel, func([]byte, bool) ([]byte, error) { return []byte(body), nil })
		return err
	}
	mustRead := func(p, want string) {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	for _, body := range []string{"one\n", "two\n"} { // the second from the cache
		if err := write("src/a/f.txt", body); err != nil {
			t.Fatal(err)
		}
	}
	mustRead(filepath.Join(ws, "src", "a", "f.txt"), "two\n")

	// src moved outside, a symlink to it in its place.
	if err := os.Rename(filepath.Join(ws, "src"), filepath.Join(outside, "src")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "src"), filepath.Join(ws, "src")); err != nil {
		t.Fatal(err)
	}
	err = write("src/a/f.txt", "escaped\n")
	if d, ok := AsDenial(err); !ok || d.Code != PathEscape {
		t.Fatalf("write through a directory swapped for a symlink: %v, want PATH_ESCAPE", err)
	}
	mustRead(filepath.Join(outside, "src", "a", "f.txt"), "two\n")
	if b, err := w.ReadFile("src/a/f.txt"); err == nil {
		t.Fatalf("ReadFile through the symlink read %q", b)
	}

	// A real directory in its place again, a new one: it is written to.
	if err := os.Remove(filepath.Join(ws, "src")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "src", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := write("src/a/f.txt", "three\n"); err != nil {
		t.Fatal(err)
	}
	mustRead(filepath.Join(ws, "src", "a", "f.txt"), "three\n")
	mustRead(filepath.Join(outside, "src", "a", "f.txt"), "two\n")

	// The temp directory swapped for a symlink to the outside: refused,
	// and no temp file is made there.
	tmp := filepath.Join(ws, filepath.FromSlash(TempDir))
	if err := os.Rename(tmp, filepath.Join(outside, "tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "tmp"), tmp); err != nil {
		t.Fatal(err)
	}
	err = write("src/a/f.txt", "four\n")
	if d, ok := AsDenial(err); !ok || d.Code != PathEscape {
		t.Fatalf("write with the temp directory swapped for a symlink: %v, want PATH_ESCAPE", err)
	}
	if left, _ := os.ReadDir(filepath.Join(outside, "tmp")); len(left) != 0 {
		t.Fatalf("temp files written outside: %v", left)
	}
	mustRead(filepath.Join(ws, "src", "a", "f.txt"), "three\n")

	// The journal directory likewise.
	os.Remove(tmp)
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	// (Edit leaves its entries to the trace to drop.)
	if err := os.RemoveAll(jd); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(jd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(jd, filepath.Join(outside, "journal")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "journal"), jd); err != nil {
		t.Fatal(err)
	}
	err = write("src/a/f.txt", "five\n")
	if d, ok := AsDenial(err); !ok || d.Code != PathEscape {
		t.Fatalf("write with the journal directory swapped for a symlink: %v, want PATH_ESCAPE", err)
	}
	if left, _ := os.ReadDir(filepath.Join(outside, "journal")); len(left) != 0 {
		t.Fatalf("journal entries written outside: %v", left)
	}
	mustRead(filepath.Join(ws, "src", "a", "f.txt"), "three\n")
}

// Canonical and Stat answer from a directory held open when they can: a
// symlink as the last component is still followed (inside) or refused
// (outside), and a directory swapped after it was cached is seen.
func TestCanonicalThroughCachedDirectory(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(ws, "src", "a"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Edit(&Call{ID: "1", Tool: "w", WS: w}, "src/a/f.txt", func([]byte, bool) ([]byte, error) { return []byte("x\n"), nil }); err != nil {
		t.Fatal(err)
	}
	if w.cachedDir("src/a") == nil {
		t.Fatal("src/a is not held open after a write into it")
	}
	if err := os.Symlink("f.txt", filepath.Join(ws, "src", "a", "in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "g.txt"), filepath.Join(ws, "src", "a", "out")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"src/a/f.txt": "src/a/f.txt", "src/a/new.txt": "src/a/new.txt", "src/a/in": "src/a/f.txt", "./src/a/in": "src/a/f.txt"} {
		if got, err := w.Canonical(p); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := w.Canonical("src/a/out"); err == nil {
		t.Error("Canonical followed a symlink out of the workspace")
	} else if d, ok := AsDenial(err); !ok || d.Code != PathEscape {
		t.Errorf("Canonical(src/a/out): %v, want PATH_ESCAPE", err)
	}
	if fi, err := w.Stat("src/a/f.txt"); err != nil || fi.Size() != 2 {
		t.Errorf("Stat(src/a/f.txt) = %v, %v", fi, err)
	}
	// src/a moved out, a symlink to it in its place.
	if err := os.Rename(filepath.Join(ws, "src", "a"), filepath.Join(outside, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "a"), filepath.Join(ws, "src", "a")); err != nil {
		t.Fatal(err)
	}
	if got, err := w.Canonical("src/a/f.txt"); err == nil {
		t.Errorf("Canonical(src/a/f.txt) through a swapped directory = %q", got)
	}
	if fi, err := w.Stat("src/a/f.txt"); err == nil {
		t.Errorf("Stat(src/a/f.txt) through a swapped directory = %v", fi)
	}
}

// A FIFO and a symlink planted in the journal directory under slot names
// neither hang a write nor receive its entry: the write takes a slot of its
// own, and reading the journal does not hang either.
func TestJournalSlotFIFOAndSymlinkSkipped(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := &Call{ID: "7", Session: "s", Tool: "w", WS: w}
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	if err := os.MkdirAll(jd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(jd, "fifo.slot"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "t.slot")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(jd, "link.slot")); err != nil {
		t.Fatal(err)
	}
	// Without O_NONBLOCK an open of the FIFO would wait for a writer for
	// ever (the test binary's -timeout would end it).
	if _, err := w.Edit(c, "a.txt", func([]byte, bool) ([]byte, error) { return []byte("x\n"), nil }); err != nil {
		t.Fatalf("write with a FIFO and a symlink among the slots: %v", err)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatalf("the entry was written through the symlink: %q", b)
	}
	entries, err := ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("ReadJournal = %v, want the write's one pending entry", entries)
	}
	for name, e := range entries {
		if name == "fifo.slot" || name == "link.slot" || e.Path != "a.txt" || e.Abandoned() {
			t.Fatalf("entry %s = %+v, want a.txt in a slot of this live process", name, e)
		}
	}
}
