package picture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A stored snapshot, reloaded in another process, diffs like the original:
// kept content gives the old bytes, the rest only their hash.
func TestStoredSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	write("src/b.txt", "two\n")
	write("empty.txt", "")
	snap, err := TakeSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := snap.Store(func(rel string, size int64) bool { return rel != "src/b.txt" })
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back StoredSnapshot
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("two\n"))
	if f := back.Files["src/b.txt"]; f.Kept || f.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("src/b.txt stored as %+v, want its hash and no content", f)
	}
	if f := back.Files["empty.txt"]; !f.Kept {
		t.Errorf("an empty kept file lost its content: %+v", f)
	}

	write("a.txt", "ONE\n")
	write("src/b.txt", "TWO\n")
	os.Remove(filepath.Join(dir, "empty.txt"))
	write("c.txt", "new\n")
	after, err := TakeSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Change{}
	for _, ch := range back.Load(dir).Diff(after) {
		got[ch.Path] = ch
	}
	if ch := got["a.txt"]; !ch.Known || string(ch.Before) != "one\n" || string(ch.After) != "ONE\n" {
		t.Errorf("a.txt: %+v", ch)
	}
	if ch := got["src/b.txt"]; ch.Known || !ch.Existed || string(ch.After) != "TWO\n" {
		t.Errorf("src/b.txt: %+v, want a change with unknown old content", ch)
	}
	if ch := got["empty.txt"]; !ch.Deleted || !ch.Known {
		t.Errorf("empty.txt: %+v, want a known deletion", ch)
	}
	if ch := got["c.txt"]; ch.Existed || string(ch.After) != "new\n" {
		t.Errorf("c.txt: %+v", ch)
	}
	if len(got) != 4 {
		t.Errorf("%d changes, want 4: %v", len(got), got)
	}
}
