package snap

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A snapshot is written in place under its final name. One cut short by a
// crash reads as missing, and the next capture of the same content replaces
// it; a whole one is kept as it is.
func TestWriteRepairsATornSnapshot(t *testing.T) {
	dir := t.TempDir()
	content := []byte("one\ntwo\nthree\n")
	sha := SHA256Hex(content)
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	p := Path(dir, sha)
	whole, err := os.ReadFile(p)
	if err != nil || len(whole) != 12+8*3 {
		t.Fatalf("snapshot file = %d bytes, %v; want %d", len(whole), err, 12+8*3)
	}
	for _, cut := range []int{0, 5, 12, len(whole) - 1} {
		if err := os.WriteFile(p, whole[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := Read(dir, sha); ok {
			t.Fatalf("a snapshot cut to %d bytes reads as whole", cut)
		}
		if err := Write(dir, sha, content); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != string(whole) {
			t.Fatalf("after a snapshot cut to %d bytes, Write left %x, want %x", cut, got, whole)
		}
	}
	// A crash can leave the whole length with blocks never written
	// (zeros): it does not read as whole, and Write replaces it.
	if err := os.WriteFile(p, make([]byte, len(whole)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := Read(dir, sha); ok {
		t.Fatal("a zero-filled snapshot reads as whole")
	}
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(whole) {
		t.Fatalf("after a zero-filled snapshot, Write left %x, want %x", got, whole)
	}
	// A whole one is not written again (its modification time stays).
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("a whole snapshot was written again: %v, %v", fi.ModTime(), err)
	}
	// Lines longer than the buffer LineFP hashes short lines in.
	long := []byte(strings.Repeat("x", 300) + "\n" + strings.Repeat("y", 255) + "\n" + strings.Repeat("z", 254) + "\n")
	for i, l := range SplitLines(long) {
		s := sha256.Sum256(append(append([]byte(nil), l...), '\n'))
		if got, want := LineFP(l), binary.BigEndian.Uint64(s[:8]); got != want {
			t.Errorf("line %d (%d bytes): LineFP = %x, want %x", i+1, len(l), got, want)
		}
	}
}
