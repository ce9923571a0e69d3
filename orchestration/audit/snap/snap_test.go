package snap

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// A snapshot written from content reads back as the fingerprints of its
// lines, each the first 8 bytes of the SHA-256 of the line and "\n"
// (computed here directly, not through LineFP).
func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	content := []byte("alpha\r\nbeta\n\ngamma")
	sum := sha256.Sum256(content)
	sha := ""
	for _, b := range sum {
		sha += string("0123456789abcdef"[b>>4]) + string("0123456789abcdef"[b&15])
	}
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	fps, ok := Read(dir, sha)
	if !ok {
		t.Fatal("Read found no snapshot")
	}
	var want []uint64
	for _, l := range []string{"alpha\n", "beta\n", "\n", "gamma\n"} {
		s := sha256.Sum256([]byte(l))
		want = append(want, binary.BigEndian.Uint64(s[:8]))
	}
	if len(fps) != len(want) {
		t.Fatalf("got %d fingerprints, want %d", len(fps), len(want))
	}
	for i := range want {
		if fps[i] != want[i] {
			t.Errorf("line %d: fingerprint %x, want %x", i+1, fps[i], want[i])
		}
	}
	if err := Write(dir, sha, []byte("other")); err == nil {
		t.Error("Write accepted content that does not hash to sha")
	}
	if _, ok := Read(dir, "../../etc/passwd"); ok {
		t.Error("Read accepted a name that is not a hash")
	}
}

// The index directory sits in .orchestration/ beside the workspace ledger,
// beside the file for any other ledger.
func TestIndexDir(t *testing.T) {
	ws := filepath.Join(string(os.PathSeparator)+"w", ".orchestration", "agent_trace.jsonl")
	if got, want := IndexDir(ws), filepath.Join(string(os.PathSeparator)+"w", ".orchestration", "index"); got != want {
		t.Errorf("IndexDir(%s) = %s, want %s", ws, got, want)
	}
	if got, want := IndexDir("/x/ledger.jsonl"), "/x/ledger.jsonl.index"; got != want {
		t.Errorf("IndexDir = %s, want %s", got, want)
	}
}
