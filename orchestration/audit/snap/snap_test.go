package snap

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// legacyFile is a snapshot file as intentgate wrote one per content before
// packs: Magic, a little-endian count, the fingerprints.
func legacyFile(fps []uint64) []byte {
	b := append([]byte(Magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(fps)))
	for _, f := range fps {
		b = binary.LittleEndian.AppendUint64(b, f)
	}
	return b
}

// Snapshot files of the layout before packs (a workspace's older history)
// are still read; one cut short or zero-filled by a crash reads as missing,
// and Write then puts the snapshot in the pack, where it reads back.
func TestReadsSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	content := []byte("one\ntwo\nthree\n")
	sha := SHA256Hex(content)
	want := Fingerprints(SplitLines(content))
	whole := legacyFile(want)
	p := Path(dir, sha)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := Read(dir, sha); !ok || !slices.Equal(got, want) {
		t.Fatalf("Read of a snapshot file = %x, %v; want %x", got, ok, want)
	}
	for _, bad := range [][]byte{whole[:0], whole[:5], whole[:12], whole[:len(whole)-1], make([]byte, len(whole)), append(whole, 0)} {
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := Read(dir, sha); ok {
			t.Fatalf("a snapshot file of %d bytes %x reads as whole", len(bad), bad)
		}
	}
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	if got, ok := Read(dir, sha); !ok || !slices.Equal(got, want) {
		t.Fatalf("Read after Write = %x, %v; want %x", got, ok, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "snap", "pack")); err != nil {
		t.Errorf("Write left no pack: %v", err)
	}
	// A snapshot already there is not appended again.
	fi1, _ := os.Stat(filepath.Join(dir, "snap", "pack"))
	if err := Write(dir, sha, content); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(filepath.Join(dir, "snap", "pack")); fi2.Size() != fi1.Size() {
		t.Errorf("a snapshot already in the pack was appended again: %d to %d bytes", fi1.Size(), fi2.Size())
	}
}

// LineFP hashes short lines in a buffer and long ones through a hasher:
// both give the first 8 bytes of the SHA-256 of the line and "\n".
func TestLineFPLongLines(t *testing.T) {
	// Lines longer than the buffer LineFP hashes short lines in.
	long := []byte(strings.Repeat("x", 300) + "\n" + strings.Repeat("y", 255) + "\n" + strings.Repeat("z", 254) + "\n")
	for i, l := range SplitLines(long) {
		s := sha256.Sum256(append(append([]byte(nil), l...), '\n'))
		if got, want := LineFP(l), binary.BigEndian.Uint64(s[:8]); got != want {
			t.Errorf("line %d (%d bytes): LineFP = %x, want %x", i+1, len(l), got, want)
		}
	}
}
