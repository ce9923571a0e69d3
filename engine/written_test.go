package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writtenTestSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The memo answers only for the very bytes it was given, whatever the
// caller does with its slice afterwards, and stays within its bound.
func TestWrittenHashes(t *testing.T) {
	var m writtenHashes
	content := bytes.Repeat([]byte("line of text\n"), 5000)
	sha := writtenTestSHA(content)
	given := append([]byte{}, content...)
	m.keep("a.txt", given, sha)
	if got := m.hashOf("a.txt", content); got != sha {
		t.Fatalf("hashOf(a.txt, what was kept) = %q, want %q", got, sha)
	}
	given[100] = 'X' // the caller's bytes change; the memo kept its own
	if got := m.hashOf("a.txt", given); got != "" {
		t.Fatalf("hashOf(a.txt, bytes changed after keep) = %q, want none", got)
	}
	if got := m.hashOf("a.txt", content); got != sha {
		t.Fatalf("hashOf(a.txt, what was kept) after the caller's change = %q, want %q", got, sha)
	}
	for name, other := range map[string][]byte{
		"first byte": append([]byte{'L'}, content[1:]...),
		"middle":     bytes.Replace(content, []byte("line of text\nline"), []byte("line of text\nLine"), 1),
		"last byte":  append(append([]byte{}, content[:len(content)-1]...), '!'),
		"shorter":    content[:len(content)-1],
		"longer":     append(append([]byte{}, content...), '\n'),
		"empty":      {},
	} {
		if got := m.hashOf("a.txt", other); got != "" {
			t.Errorf("hashOf(a.txt, %s differs) = %q, want none", name, got)
		}
	}
	if got := m.hashOf("b.txt", content); got != "" {
		t.Errorf("hashOf(b.txt, a.txt's content) = %q, want none", got)
	}

	// Bounded: a file over the limit is not kept (and forgets the
	// path's older content); all copies together stay under the cap.
	big := make([]byte, writtenMaxFile+1)
	m.keep("a.txt", big, writtenTestSHA(big))
	if got := m.hashOf("a.txt", big); got != "" {
		t.Errorf("a file over %d bytes was kept", writtenMaxFile)
	}
	if got := m.hashOf("a.txt", content); got != "" {
		t.Errorf("a.txt's older content still answers after a write it could not keep")
	}
	mb := make([]byte, writtenMaxFile)
	for i := range 40 {
		mb[0] = byte(i)
		m.keep(strings.Repeat("d/", i)+"f", mb, writtenTestSHA(mb))
		if m.bytes > writtenMaxBytes {
			t.Fatalf("after %d files of 1 MiB the memo holds %d bytes, over %d", i+1, m.bytes, writtenMaxBytes)
		}
	}
	if got := m.hashOf(strings.Repeat("d/", 39)+"f", mb); got != writtenTestSHA(mb) {
		t.Errorf("the last file kept is not known: %q", got)
	}
}

// Through Workspace.Edit: the content a write left is known without hashing
// it again, with the right hash; a change by anybody else, even of one byte
// and keeping the length, is still seen by the hash lock.
func TestEditKnowsWhatItWrote(t *testing.T) {
	ws := t.TempDir()
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rel := "src/a.txt"
	one := bytes.Repeat([]byte("first version\n"), 3000)
	two := bytes.Repeat([]byte("second version\n"), 3000)
	edit := func(id, expect string, content []byte) (FileChange, error) {
		c := &Call{ID: id, Session: "s", Tool: "w", WS: w}
		if expect != "-" {
			c.SetExpect(rel, expect)
		}
		return w.Edit(c, rel, func([]byte, bool) ([]byte, error) { return content, nil })
	}
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	given := append([]byte{}, one...)
	if _, err := edit("1", "", given); err != nil {
		t.Fatal(err)
	}
	copy(given, "MUTATED") // the tool's buffer, changed after the write
	ch, err := edit("2", writtenTestSHA(one), two)
	if err != nil {
		t.Fatalf("rewrite of the content this workspace wrote: %v", err)
	}
	if ch.BeforeSHA256 != writtenTestSHA(one) || ch.AfterSHA256 != writtenTestSHA(two) {
		t.Fatalf("hashes %s -> %s, want %s -> %s", ch.BeforeSHA256, ch.AfterSHA256, writtenTestSHA(one), writtenTestSHA(two))
	}

	// Someone else changes one byte, same length, same inode.
	three := append([]byte{}, two...)
	three[len(three)/2] = 'X'
	if err := os.WriteFile(filepath.Join(ws, "src", "a.txt"), three, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = edit("3", writtenTestSHA(two), one)
	d, ok := AsDenial(err)
	if !ok || d.Code != StaleFile || d.ActualSHA256 != writtenTestSHA(three) {
		t.Fatalf("write over a file changed by someone else = %v, want STALE_FILE with its real hash %s", err, writtenTestSHA(three))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "a.txt")); !bytes.Equal(b, three) {
		t.Fatal("the refused write changed the file")
	}
	// Without a hash lock the trace still gets the real before hash.
	ch, err = edit("4", "-", one)
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.BeforeHash(); got != writtenTestSHA(three) {
		t.Fatalf("before hash of the other writer's content = %s, want %s", got, writtenTestSHA(three))
	}
}
