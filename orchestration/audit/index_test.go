package audit

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

func TestIndexExtendsAndRebuilds(t *testing.T) {
	ws, ledger := testWorkspace(t, 30)
	q := LogOptions{Workspace: ws, Intent: "INT-002"}
	want := func() []Entry {
		t.Helper()
		o := q
		o.NoIndex = true
		es, err := Log(o)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	check := func(built string) {
		t.Helper()
		ix, err := OpenIndex(ledger, ws)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Built != built {
			t.Errorf("index %s, want %s", ix.Built, built)
		}
		ix.Close()
		got, err := Log(q)
		if err != nil {
			t.Fatal(err)
		}
		if w := want(); !reflect.DeepEqual(got, w) {
			t.Errorf("Log with the index = %d entries, without = %d", len(got), len(w))
		}
	}
	check("rebuilt")
	check("current")
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 { // grown: extended, and the small segments merged
		if err := l.Append(testRecord(t, 100+i)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			check("extended")
		}
	}
	l.Close()
	check("extended")
	// Rewritten under it: the last indexed line is not where it was.
	lines := readLines(t, ledger)
	writeLines(t, ledger, append(clone(lines[:20]), forgedLine(t, lines, 20)))
	check("rebuilt")
	b, _ := os.ReadFile(filepath.Join(indexDir(ledger), manifestName))
	var segs int
	for _, c := range string(b) {
		if c == '{' {
			segs++
		}
	}
	if segs > 4 {
		t.Errorf("manifest lists %d segments after a rebuild:\n%s", segs-1, b)
	}
}

// A damaged index file is noticed and rebuilt, or at worst hides records;
// it never panics and never makes log show a record that does not match.
func FuzzIndexSegment(f *testing.F) {
	ws, ledger := testWorkspace(f, 12)
	fresh := func(t testing.TB) string {
		if err := os.RemoveAll(indexDir(ledger)); err != nil {
			t.Fatal(err)
		}
		ix, err := OpenIndex(ledger, ws)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		return filepath.Join(indexDir(ledger), ix.man.Segments[0].Name)
	}
	good, err := os.ReadFile(fresh(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(segMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, q := range []LogOptions{{Intent: "INT-001"}, {Session: "s1"}, {File: "src/f1.go"}, {Denials: true}} {
			if err := os.WriteFile(fresh(t), b, 0o644); err != nil {
				t.Fatal(err)
			}
			q.Workspace = ws
			got, err := Log(q)
			if err != nil {
				continue
			}
			for _, e := range got {
				if !q.matches(&e) {
					t.Fatalf("Log(%+v) listed %+v", q, e)
				}
			}
		}
		if err := os.WriteFile(fresh(t), b, 0o644); err != nil {
			t.Fatal(err)
		}
		Blame(BlameOptions{Workspace: ws, Path: "src/f1.go"})
		Show(ws, "", "00000000")
	})
}

// Where the index cannot be written (a read-only checkout; here, a file in
// its way), the queries read the ledger instead.
func TestQueriesWithoutIndex(t *testing.T) {
	ws, ledger := testWorkspace(t, 10)
	if err := os.WriteFile(indexDir(ledger), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	es, err := Log(LogOptions{Workspace: ws, Session: "s1"})
	if err != nil || len(es) == 0 {
		t.Fatalf("Log = %d entries, %v", len(es), err)
	}
	s, err := Show(ws, "", ShortID(es[0].ID))
	if err != nil || s.ID != es[0].ID || s.Link == "" {
		t.Fatalf("Show = %+v, %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "f1.go"), []byte("x\n"), 0o644); err != nil {
		if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, "src", "f1.go"), []byte("x\n"), 0o644)
	}
	if res, err := Blame(BlameOptions{Workspace: ws, Path: "src/f1.go"}); err != nil || res.Index != "none" {
		t.Fatalf("Blame = %+v, %v", res, err)
	}
	exp := filepath.Join(t.TempDir(), "x.jsonl")
	f, _ := os.Create(exp)
	Export(ledger, orchestration.ShapeSeed, f)
	f.Close()
	in, _ := os.Open(exp)
	defer in.Close()
	if res, err := Import(ledger, in); err != nil || res.Duplicates != 10 || res.Appended != 0 {
		t.Fatalf("Import = %+v, %v", res, err)
	}
}

func FuzzReadSnapshot(f *testing.F) {
	dir := f.TempDir()
	content := []byte("a\nb\r\nc")
	sha := snap.SHA256Hex(content)
	// A snapshot file as kept before packs, which workspaces may still
	// hold.
	good := legacySnapshot(fingerprints(snap.SplitLines(content)))
	if err := os.MkdirAll(filepath.Dir(snapPath(dir, sha)), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:13])
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(snapPath(dir, sha), b, 0o644); err != nil {
			t.Fatal(err)
		}
		fps, ok := readSnapshot(dir, sha)
		if ok && len(b) != 12+8*len(fps) {
			t.Fatalf("readSnapshot accepted %d bytes as %d fingerprints", len(b), len(fps))
		}
	})
}

// legacySnapshot is a snapshot file as intentgate wrote one per content
// before packs: "IGSNAP01", a little-endian count, the fingerprints.
func legacySnapshot(fps []uint64) []byte {
	b := []byte("IGSNAP01")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fps)))
	for _, f := range fps {
		b = binary.LittleEndian.AppendUint64(b, f)
	}
	return b
}
