//go:build unix

package orchestration

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A ledger replaced by a symlink while a Ledger holds it open is refused
// on the next append: the record goes neither through the link (to a file
// the link's author chose) nor to the old, unlinked file.
func TestLedgerReplacedBySymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LedgerName)
	l := ledgerTestOpen(t, path)
	if err := l.Append(ledgerTestRecord(t, "INT-001", 1)); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "elsewhere.jsonl")
	if err := os.WriteFile(elsewhere, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ledgerTestRecord(t, "INT-001", 2)); err == nil {
		t.Fatal("append through a symlink at the ledger's path succeeded")
	}
	if got, _ := os.ReadFile(elsewhere); !bytes.Equal(got, []byte("kept\n")) {
		t.Errorf("the link's target was written: %q", got)
	}
	moved, _ := os.ReadFile(path + ".moved")
	if n := bytes.Count(moved, []byte("\n")); n != 1 {
		t.Errorf("the moved-away ledger has %d lines, want the 1 written before the swap", n)
	}
}
