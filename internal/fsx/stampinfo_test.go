//go:build linux || darwin

package fsx

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// StampInfo reads the same stamp out of a FileInfo as a stat of the path
// gives, and a change of the file's content, times or identity changes it.
func TestStampInfoMatchesStampOf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stampNow := func() Stamp {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := StampOf(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := StampInfo(fi); got != s || !got.Known() {
			t.Fatalf("StampInfo %+v, StampOf %+v", got, s)
		}
		return s
	}
	first := stampNow()
	if first.Size() != 4 {
		t.Fatalf("size %d, want 4", first.Size())
	}
	fi, _ := os.Lstat(p)
	// Same size, mtime set back: the ctime still moves.
	if err := os.WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past a coarse clock tick, for the ctime
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if second := stampNow(); second == first {
		t.Fatal("a rewrite with the mtime set back left the stamp unchanged")
	}
	dev, ino := first.Identity()
	if dev == 0 && ino == 0 {
		t.Fatal("no identity in a known stamp")
	}
	if (Stamp{}).Known() {
		t.Fatal("the zero Stamp is known")
	}
}
