package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// testWorkspace is a git repository (made with go-git, no git binary
// needed) with a ledger of n change records spread over a few files.
func testWorkspace(t testing.TB, n int) (ws, ledger string) {
	t.Helper()
	ws = t.TempDir()
	if _, err := git.PlainInit(ws, false); err != nil {
		t.Fatal(err)
	}
	ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		if err := l.Append(testRecord(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, ledger
}

var testTime = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func testRecord(t testing.TB, i int) *orchestration.Record {
	t.Helper()
	in := orchestration.RecordInput{
		Time: testTime.Add(time.Duration(i) * time.Minute), Revision: strings.Repeat("ab", 20), ToolVersion: "test",
		Model: []string{"anthropic/claude-opus-4-5", "openai/gpt-5"}[i%2], AgentName: "test-agent",
		Path: fmt.Sprintf("src/f%d.go", i%3),
		Ranges: []orchestration.Range{{StartLine: 1, EndLine: 2,
			ContentHash: orchestration.HashLines(fmt.Sprintf("line %d", i), "x")}},
		Meta: orchestration.Meta{Intent: []string{"INT-001", "INT-002"}[i%2], Session: fmt.Sprintf("s%d", i%4),
			CallID: fmt.Sprint(i), Tool: "write_to_file", Mutation: orchestration.MutationModify},
	}
	if i%5 == 4 {
		in.Ranges = nil
		in.Meta.Decision = orchestration.DecisionDeny
		in.Meta.Mutation = ""
		in.Meta.Denial = []byte(`{"error":"SCOPE_VIOLATION","tool":"write_to_file","message":"no"}`)
	}
	rec, err := orchestration.NewRecord(in)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte{'\n'})[:bytes.Count(b, []byte{'\n'})]
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A valid record that links to line `after` (1-based; 0 for none) of lines,
// as an attacker who knows the chain rule would write it.
func forgedLine(t testing.TB, lines [][]byte, after int) []byte {
	t.Helper()
	rec := testRecord(t, 1000)
	rec.Meta.Prev = ""
	if after > 0 {
		rec.Meta.Prev = orchestration.LineLink(bytes.TrimSuffix(lines[after-1], []byte{'\n'}))
	}
	b, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

type tamper struct {
	name string
	kind string // what verify must call it on a sealed ledger
	do   func(lines [][]byte, i int) [][]byte
}

func tampers(t testing.TB) []tamper {
	return []tamper{
		{"edit", KindEdit, func(lines [][]byte, i int) [][]byte {
			out := clone(lines)
			out[i] = bytes.Replace(out[i], []byte(`"session":"s`), []byte(`"session":"x`), 1)
			return out
		}},
		{"delete", KindDeletion, func(lines [][]byte, i int) [][]byte {
			return append(clone(lines[:i]), lines[i+1:]...)
		}},
		{"insert", KindInsertion, func(lines [][]byte, i int) [][]byte {
			out := clone(lines[:i])
			out = append(out, forgedLine(t, lines, i))
			return append(out, lines[i:]...)
		}},
		{"swap", KindReorder, func(lines [][]byte, i int) [][]byte {
			out := clone(lines)
			if i+1 < len(out) {
				out[i], out[i+1] = out[i+1], out[i]
			}
			return out
		}},
		{"truncate", KindTruncation, func(lines [][]byte, i int) [][]byte {
			return clone(lines[:i])
		}},
	}
}

func clone(lines [][]byte) [][]byte { return append([][]byte(nil), lines...) }

func TestVerifyIntact(t *testing.T) {
	ws, ledger := testWorkspace(t, 12)
	rep, err := Verify(VerifyOptions{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Intact || rep.Lines != 12 || rep.Records != 12 || len(rep.Problems) != 0 {
		t.Fatalf("Verify = intact %v, %d lines, problems %v; want intact, 12 lines", rep.Intact, rep.Lines, rep.Problems)
	}
	if rep.Ledger != ledger {
		t.Errorf("Ledger = %q, want %q", rep.Ledger, ledger)
	}
}

// Every single-record edit, deletion, insertion, swap and truncation of a
// sealed ledger is detected, at the right line and as the right kind.
func TestVerifySealedTamper(t *testing.T) {
	const n = 8
	ws, ledger := testWorkspace(t, n)
	if _, _, err := Seal(SealOptions{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	orig := readLines(t, ledger)
	for _, tc := range tampers(t) {
		for i := range n {
			if tc.name == "swap" && i == n-1 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", tc.name, i+1), func(t *testing.T) {
				writeLines(t, ledger, tc.do(orig, i))
				defer writeLines(t, ledger, orig)
				rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Intact || rep.FirstBad == nil {
					t.Fatalf("Verify after %s of line %d = intact", tc.name, i+1)
				}
				want := tc.kind
				if tc.name == "delete" && i == n-1 {
					want = KindTruncation // the last line's deletion is one
				}
				if rep.FirstBad.Line != i+1 || rep.FirstBad.Kind != want {
					t.Errorf("first bad = %v, want line %d, kind %s", rep.FirstBad, i+1, want)
				}
			})
		}
	}
	// Untouched again, and grown since: intact.
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(testRecord(t, 99)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Intact || len(rep.Checkpoints) != 1 || !rep.Checkpoints[0].OK {
		t.Fatalf("grown ledger: intact %v, checkpoints %+v; want intact with 1 checkpoint holding", rep.Intact, rep.Checkpoints)
	}
}

// Without a seal the chain still catches every change before the last line;
// a clever insertion (a valid record with a valid prev) shows as a fork, which
// is why seals exist.
func TestVerifyChainTamper(t *testing.T) {
	const n = 8
	ws, ledger := testWorkspace(t, n)
	orig := readLines(t, ledger)
	for _, tc := range tampers(t) {
		for i := range n - 1 {
			if tc.name == "truncate" || (tc.name == "swap" && i == n-1) {
				continue
			}
			writeLines(t, ledger, tc.do(orig, i))
			rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.name == "insert":
				// A valid record with a valid prev is a fork no git
				// merge explains: an insertion.
				if rep.Intact || rep.FirstBad.Line != i+2 || rep.FirstBad.Kind != KindInsertion || rep.FirstBad.Fault != FaultFork {
					t.Errorf("insert at %d: intact %v first bad %v; want an insertion at line %d", i+1, rep.Intact, rep.FirstBad, i+2)
				}
			case rep.Intact:
				t.Errorf("%s of line %d: verified intact", tc.name, i+1)
			default:
				// The chain names the first record whose link fails.
				want := map[string]Finding{
					"edit":   {Line: i + 2, Kind: KindEditOrDeletion},
					"delete": {Line: i + 1, Kind: KindEditOrDeletion},
					"swap":   {Line: i + 1, Kind: KindReorder},
				}[tc.name]
				if i == 0 && tc.name == "delete" {
					want.Kind = KindDeletion // the new first line has a prev
				}
				if rep.FirstBad.Line != want.Line || rep.FirstBad.Kind != want.Kind {
					t.Errorf("%s of line %d: first bad %v, want line %d, %s", tc.name, i+1, rep.FirstBad, want.Line, want.Kind)
				}
			}
		}
	}
	writeLines(t, ledger, orig)
}

func TestVerifyDetectsRewriteAndRollback(t *testing.T) {
	ws, ledger := testWorkspace(t, 6)
	if _, _, err := Seal(SealOptions{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	orig := readLines(t, ledger)
	// A wholesale rewrite: a fresh, internally consistent chain.
	var fresh [][]byte
	for i := range 6 {
		fresh = append(fresh, forgedLine(t, fresh, len(fresh)))
		_ = i
	}
	writeLines(t, ledger, fresh)
	rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intact || rep.FirstBad.Kind != KindRewrite || rep.FirstBad.Line != 1 {
		t.Errorf("rewrite: first bad %v, want a rewrite at line 1", rep.FirstBad)
	}
	// A rollback to an earlier state, then new appends on top.
	rolled := append(clone(orig[:3]), forgedLine(t, orig, 3))
	writeLines(t, ledger, rolled)
	rep, err = Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intact || rep.FirstBad.Line != 4 {
		t.Errorf("rollback: first bad %v, want line 4", rep.FirstBad)
	}
}

// Two branches appended to the same ledger and were merged with git's union
// merge: the fork is explained by the merge commit, and the ledger is intact.
// The same bytes without the merge in git's history are an insertion.
func TestVerifyUnionMerge(t *testing.T) {
	ws, ledger := testWorkspace(t, 4)
	base := readLines(t, ledger)
	ours := clone(base)
	ours = append(ours, forgedLine(t, ours, 4))
	ours = append(ours, forgedLine(t, ours, 5))
	theirs := clone(base)
	theirs = append(theirs, forgedLine(t, theirs, 4))
	merged := append(clone(ours), theirs[4:]...)

	// Without the history: the same file is a break.
	writeLines(t, ledger, merged)
	rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intact || rep.FirstBad == nil || rep.FirstBad.Line != 7 || rep.FirstBad.Fault != FaultFork {
		t.Fatalf("merged bytes without a merge commit: intact %v, first bad %v; want a fork fault at line 7", rep.Intact, rep.FirstBad)
	}

	// With it: base, then ours and theirs on two branches, then the merge.
	repo, err := git.PlainOpen(ws)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commit := func(lines [][]byte, parents ...plumbing.Hash) plumbing.Hash {
		t.Helper()
		writeLines(t, ledger, lines)
		if _, err := wt.Add(".orchestration/agent_trace.jsonl"); err != nil {
			t.Fatal(err)
		}
		sig := &object.Signature{Name: "t", Email: "t@example.com", When: testTime}
		h, err := wt.Commit("ledger", &git.CommitOptions{Author: sig, Parents: parents, AllowEmptyCommits: true})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	b := commit(base)
	o := commit(ours, b)
	th := commit(theirs, b)
	commit(merged, o, th)
	rep, err = Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Intact || len(rep.Forks) != 1 || rep.Forks[0] != (Fork{Line: 7, Parent: 4}) {
		t.Fatalf("union merge: intact %v, forks %v, problems %v; want intact with fork 7->4", rep.Intact, rep.Forks, rep.Problems)
	}
	// A record inserted with a valid prev after the merge is still caught.
	forged := append(clone(merged[:2]), append([][]byte{forgedLine(t, merged, 2)}, merged[2:]...)...)
	writeLines(t, ledger, forged)
	if rep, err = Verify(VerifyOptions{Workspace: ws, NoDrift: true}); err != nil {
		t.Fatal(err)
	}
	if rep.Intact || rep.FirstBad.Line != 4 || rep.FirstBad.Kind != KindInsertion {
		t.Fatalf("insertion after a merge: intact %v, first bad %v; want an insertion at line 4", rep.Intact, rep.FirstBad)
	}
}

func TestVerifySchemaAndTornTail(t *testing.T) {
	ws, ledger := testWorkspace(t, 3)
	lines := readLines(t, ledger)
	// Valid JSON and a parseable record, but not Agent Trace: a contributor
	// type the format does not know.
	lines[1] = bytes.Replace(lines[1], []byte(`"type":"ai"`), []byte(`"type":"robot"`), 1)
	writeLines(t, ledger, append(lines, []byte(`{"version":"0.1.0","id":`)))
	rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intact || rep.FirstBad.Line != 2 {
		t.Fatalf("first bad = %v, want line 2", rep.FirstBad)
	}
	var invalid bool
	for _, p := range rep.Problems {
		invalid = invalid || (p.Line == 2 && p.Fault == FaultInvalid)
	}
	if !invalid || rep.TornTail == 0 {
		t.Errorf("problems %v, torn tail %d; want line 2 invalid and a torn tail", rep.Problems, rep.TornTail)
	}
}

func TestSchemaCopyIsTestdata(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent-trace-0.1.0.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(SchemaJSON, want) {
		t.Fatal("orchestration/audit/agent-trace-0.1.0.schema.json differs from testdata/agent-trace-0.1.0.schema.json; copy one over the other")
	}
}

func TestDrift(t *testing.T) {
	ws := t.TempDir()
	ledger := filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	files := map[string]string{
		"same.txt":  "a\nb\nc\n",
		"moved.txt": "a\nb\nc\n",
		"holds.txt": "a\nb\nc\n",
		"chg.txt":   "a\nb\nc\n",
		"gone.txt":  "a\nb\nc\n",
	}
	for p, body := range files {
		ranges, _ := orchestration.ComputeRanges([]byte("a\n"), []byte(body))
		rec, err := orchestration.NewRecord(orchestration.RecordInput{Path: p, Ranges: ranges,
			Meta: orchestration.Meta{Mutation: orchestration.MutationModify, AfterSHA256: snap.SHA256Hex([]byte(body))}})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	now := map[string]string{
		"same.txt":  "a\nb\nc\n",
		"moved.txt": "new\nnewer\na\nb\nc\n",
		"holds.txt": "a\nb\nc\nappended\n",
		"chg.txt":   "a\nB\nc\n",
	}
	for p, body := range now {
		if err := os.WriteFile(filepath.Join(ws, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Verify(VerifyOptions{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"same.txt": DriftUnchanged, "moved.txt": DriftMoved, "holds.txt": DriftHolds, "chg.txt": DriftChanged, "gone.txt": DriftDeleted}
	for _, d := range rep.Drift {
		if d.Status != want[d.Path] {
			t.Errorf("drift of %s = %s (%+v), want %s", d.Path, d.Status, d.Ranges, want[d.Path])
		}
		if d.Path == "moved.txt" && (len(d.Ranges) != 1 || d.Ranges[0].MovedTo != 4) {
			t.Errorf("moved.txt ranges = %+v, want lines 2-3 moved to 4", d.Ranges)
		}
	}
	if len(rep.Drift) != len(want) {
		t.Errorf("drift has %d files, want %d", len(rep.Drift), len(want))
	}
}

// A ledger a team writes in the seed shape verifies: each record is valid as
// the Agent Trace record it stands for.
func TestVerifySeedShape(t *testing.T) {
	ws := t.TempDir()
	ledger := filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	l.Shape = orchestration.ShapeSeed
	for i := range 5 {
		if err := l.Append(testRecord(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	rep, err := Verify(VerifyOptions{Workspace: ws, NoDrift: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Intact || rep.SeedRecords != 5 {
		t.Fatalf("seed-shaped ledger: intact %v, %d seed records, problems %v", rep.Intact, rep.SeedRecords, rep.Problems)
	}
}
