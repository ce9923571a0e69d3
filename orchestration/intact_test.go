//go:build unix

package orchestration

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// CheckIntact answers from one listing of .orchestration when everything is
// as intentgate made it, and names what is wrong otherwise: every entry it
// writes through, swapped for a symlink, a file for a directory or the
// other way round, is refused; with names, only those entries count.
func TestCheckIntactEachEntry(t *testing.T) {
	mk := func(t *testing.T) string {
		orch := filepath.Join(t.TempDir(), ".orchestration")
		for _, e := range intactEntries {
			p := filepath.Join(orch, e.name)
			if e.dir {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.MkdirAll(orch, 0o755); err != nil {
				t.Fatal(err)
			} else if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return orch
	}
	orch := mk(t)
	if err := CheckIntact(orch); err != nil {
		t.Fatalf("intact directory: %v", err)
	}
	if err := CheckIntact(filepath.Join(t.TempDir(), "missing")); err != nil {
		t.Fatalf("no .orchestration yet: %v", err)
	}
	outside := t.TempDir()
	for _, e := range intactEntries {
		for _, swap := range []string{"symlink", "other"} {
			orch := mk(t)
			p := filepath.Join(orch, e.name)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			var err error
			switch {
			case swap == "symlink":
				err = os.Symlink(outside, p)
			case e.dir:
				err = os.WriteFile(p, nil, 0o644)
			default:
				err = os.Mkdir(p, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := CheckIntact(orch)
			if got == nil || !strings.Contains(got.Error(), e.name) {
				t.Errorf("%s replaced (%s): %v, want a refusal naming it", e.name, swap, got)
			}
			if err := CheckIntact(orch, e.name); err == nil {
				t.Errorf("%s replaced (%s), checked by name: no refusal", e.name, swap)
			}
			other := "sessions"
			if e.name == other {
				other = "locks"
			}
			if err := CheckIntact(orch, other); err != nil {
				t.Errorf("%s replaced (%s), only %s checked: %v", e.name, swap, other, err)
			}
		}
	}
	// .orchestration itself a symlink to a directory that looks intact.
	link := filepath.Join(t.TempDir(), ".orchestration")
	if err := os.Symlink(orch, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckIntact(link); err == nil || !strings.Contains(err.Error(), "not a plain directory") {
		t.Errorf(".orchestration a symlink: %v, want a refusal", err)
	}
}

// CheckIntact keeps the directory's stamp from a listing that showed it
// intact, and answers from a stat while it holds. Every swap of an entry
// after that, between two checks, is still refused.
func TestCheckIntactSeesSwapsAfterAKeptListing(t *testing.T) {
	outside := t.TempDir()
	for _, e := range intactEntries {
		orch := filepath.Join(t.TempDir(), ".orchestration")
		if err := os.MkdirAll(filepath.Join(orch, "sessions"), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(orch, e.name)
		if e.dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// Settled past the file system's clock ticks (and whole-second
		// timestamps), the listing is kept.
		time.Sleep(100 * time.Millisecond)
		if runtime.GOOS != "linux" {
			time.Sleep(2 * time.Second)
		}
		for range 2 {
			if err := CheckIntact(orch); err != nil {
				t.Fatalf("%s: intact directory: %v", e.name, err)
			}
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
		if err := CheckIntact(orch); err == nil || !strings.Contains(err.Error(), e.name) {
			t.Errorf("%s swapped for a symlink after a kept listing: %v, want a refusal naming it", e.name, err)
		}
	}
}
