package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// sim writes files and records each write as the trace policy does.
type sim struct {
	t      *testing.T
	ws     string
	ledger string
	l      *orchestration.Ledger
	n      int
}

func newSim(t *testing.T) *sim {
	t.Helper()
	ws := t.TempDir()
	ledger := filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &sim{t: t, ws: ws, ledger: ledger, l: l}
}

// write records content as a change of p by an agent and returns the id.
func (s *sim) write(p, content, session string) string {
	s.t.Helper()
	full := filepath.Join(s.ws, filepath.FromSlash(p))
	before, err := os.ReadFile(full)
	existed := err == nil
	ranges, deleted := orchestration.ComputeRanges(before, []byte(content))
	m := orchestration.Meta{Intent: "INT-001", Session: session, CallID: fmt.Sprint(s.n), Tool: "write_to_file",
		Mutation: orchestration.MutationCreate, AfterSHA256: snap.SHA256Hex([]byte(content)), DeletedLines: deleted}
	if existed {
		m.Mutation, m.BeforeSHA256 = orchestration.MutationModify, snap.SHA256Hex(before)
	}
	s.n++
	rec, err := orchestration.NewRecord(orchestration.RecordInput{Model: "test/model", Path: p, Ranges: ranges, Meta: m})
	if err != nil {
		s.t.Fatal(err)
	}
	s.person(p, content)
	if err := s.l.Append(rec); err != nil {
		s.t.Fatal(err)
	}
	return rec.ID
}

// person changes a file without the ledger knowing.
func (s *sim) person(p, content string) {
	s.t.Helper()
	full := filepath.Join(s.ws, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sim) blame(p string, noIndex bool) *BlameResult {
	s.t.Helper()
	res, err := Blame(BlameOptions{Workspace: s.ws, Path: p, NoIndex: noIndex})
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// fn is a small function with a distinct body.
func fn(name string) string {
	return fmt.Sprintf("func %s() int {\n\tx := compute%s()\n\treturn x * 2\n}\n", name, name)
}

// want checks who each line is attributed to: an id, or "" for none.
func want(t *testing.T, res *BlameResult, who map[string]string, ids ...string) {
	t.Helper()
	for _, l := range res.Lines {
		w, ok := who[l.Text]
		if !ok {
			continue
		}
		got := ""
		if l.Record != nil {
			got = l.Record.Record
		}
		if got != w {
			name := func(id string) string {
				for i, x := range ids {
					if x == id {
						return fmt.Sprintf("r%d", i+1)
					}
				}
				return id
			}
			ev := l.Reason
			if l.Record != nil {
				ev = l.Record.Evidence
			}
			t.Errorf("line %d %q: attributed to %s (%s), want %s", l.Line, l.Text, name(got), ev, name(w))
		}
	}
}

func lines(block string) []string { return strings.Split(strings.TrimSuffix(block, "\n"), "\n") }

func TestBlameMoveWithinFile(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("noIndex=%v", noIndex), func(t *testing.T) {
			s := newSim(t)
			a, b, c, d := fn("alpha"), fn("beta"), fn("gamma"), fn("delta")
			r1 := s.write("src/x.go", a+b+c, "s1")
			r2 := s.write("src/x.go", c+a+b+d, "s2") // gamma moved to the top, delta added
			res := s.blame("src/x.go", noIndex)
			who := map[string]string{}
			for _, blk := range []string{a, b, c} {
				for _, l := range lines(blk) {
					who[l] = r1
				}
			}
			for _, l := range lines(d) {
				who[l] = r2
			}
			delete(who, "}")
			delete(who, "\treturn x * 2")
			want(t, res, who, r1, r2)
			for _, l := range res.Lines {
				if l.Record == nil {
					t.Errorf("line %d %q unattributed: %s", l.Line, l.Text, l.Reason)
				}
			}
		})
	}
}

func TestBlameHandEdit(t *testing.T) {
	s := newSim(t)
	a, b, c := fn("alpha"), fn("beta"), fn("gamma")
	r1 := s.write("src/x.go", a+b, "s1")
	r2 := s.write("src/x.go", b+a+c, "s2")
	s.blame("src/x.go", false) // the index keeps a snapshot of what r2 left
	edited := strings.Replace(b+a+c, "computealpha()", "computeALPHA() // by hand", 1)
	s.person("src/x.go", edited)
	res := s.blame("src/x.go", false)
	who := map[string]string{"\tx := computeALPHA() // by hand": "", "func alpha() int {": r1, "func beta() int {": r1,
		"\tx := computebeta()": r1, "func gamma() int {": r2, "\tx := computegamma()": r2}
	want(t, res, who, r1, r2)
	for _, l := range res.Lines {
		if strings.Contains(l.Text, "by hand") && l.Reason != ReasonEdited {
			t.Errorf("hand-edited line: reason %q, want %q", l.Reason, ReasonEdited)
		}
	}

	// Without the snapshot only what the ledger proves by itself is said:
	// the hand-edited line, and the lines recorded with it in one range,
	// stay unattributed; nothing is attributed wrongly.
	if err := os.RemoveAll(filepath.Join(s.ws, ".orchestration", "index")); err != nil {
		t.Fatal(err)
	}
	res = s.blame("src/x.go", true)
	for _, l := range res.Lines {
		if strings.Contains(l.Text, "by hand") && l.Record != nil {
			t.Errorf("hand-edited line attributed to %s", l.Record.Record)
		}
		if l.Record != nil && l.Record.Record != r1 && l.Record.Record != r2 {
			t.Errorf("line %d attributed to unknown %s", l.Line, l.Record.Record)
		}
	}
}

// A move combined with an edit in the same change: replay needs the
// snapshot of the version before it, which the index took when it was
// updated in between.
func TestBlameMoveWithEditNeedsSnapshot(t *testing.T) {
	s := newSim(t)
	a, b, c := fn("alpha"), fn("beta"), fn("gamma")
	r1 := s.write("src/x.go", a+b+c, "s1")
	s.blame("src/x.go", false)
	c2 := strings.Replace(c, "return x * 2", "return x * 3", 1)
	r2 := s.write("src/x.go", c2+a+b, "s2")
	res := s.blame("src/x.go", false)
	who := map[string]string{"func gamma() int {": r1, "\tx := computegamma()": r1, "\treturn x * 3": r2, "func alpha() int {": r1}
	want(t, res, who, r1, r2)
}

func TestBlamePredatesAndUnknown(t *testing.T) {
	s := newSim(t)
	s.person("src/x.go", "package x\n\nconst old = 1\n")
	r1 := s.write("src/x.go", "package x\n\nconst old = 1\nconst added = 2\n", "s1")
	res := s.blame("src/x.go", false)
	want(t, res, map[string]string{"package x": "", "const old = 1": "", "const added = 2": r1}, r1)
	if res.Lines[0].Reason != ReasonPredates {
		t.Errorf("line 1 reason = %q, want %q", res.Lines[0].Reason, ReasonPredates)
	}
	s.person("src/y.go", "never recorded\n")
	res = s.blame("src/y.go", false)
	if res.Lines[0].Record != nil || res.Lines[0].Reason != ReasonNoRecord {
		t.Errorf("unrecorded file: %+v", res.Lines[0])
	}
}

// A block recorded as its own range in one file keeps its writer when a
// later change moves it into another file.
func TestBlameMoveAcrossFiles(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("noIndex=%v", noIndex), func(t *testing.T) {
			s := newSim(t)
			a, b, c := fn("alpha"), fn("beta"), fn("gamma")
			r1 := s.write("src/a.go", a, "s1")
			r2 := s.write("src/a.go", a+b, "s1") // beta is r2's own range
			s.write("src/a.go", a, "s2")         // beta leaves a.go ...
			r4 := s.write("src/b.go", c+b, "s2") // ... for b.go
			res := s.blame("src/b.go", noIndex)
			want(t, res, map[string]string{"func beta() int {": r2, "\tx := computebeta()": r2, "func gamma() int {": r4}, r1, r2, "r3", r4)
			for _, l := range res.Lines {
				if strings.Contains(l.Text, "beta") && (l.Record == nil || l.Record.From != "" && l.Record.From != "src/a.go") {
					t.Errorf("line %d: %+v, want from src/a.go", l.Line, l.Record)
				}
			}
		})
	}
}
