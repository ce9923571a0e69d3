package orchestration

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// intentMapUpdate is the -update flag; other golden tests of the package may
// have registered it first.
var intentMapUpdate = func() flag.Value {
	if f := flag.Lookup("update"); f != nil {
		return f.Value
	}
	flag.Bool("update", false, "rewrite golden files")
	return flag.Lookup("update").Value
}()

const intentMapGolden = "testdata/intent_map.golden.md"

func intentMapTestIntents() []Intent {
	return []Intent{
		{ID: "INT-003", Name: "Docs | pipes", Status: StatusPending, OwnedScope: []string{"docs/**"}},
		{ID: "INT-001", Name: "JWT authentication migration", Status: StatusInProgress, OwnedScope: []string{"src/auth/**", "src/middleware/jwt.go"}},
		{ID: "INT-002", Name: "Billing tax rules", Status: StatusCompleted, OwnedScope: []string{"src/billing/**"}},
	}
}

// intentMapTestRecords is the hand-made ledger of the golden test, in
// order. Each record has a fixed id and time.
func intentMapTestRecords(t testing.TB) []*Record {
	t.Helper()
	at := func(min, sec int) time.Time { return time.Date(2026, 2, 16, 12, min, sec, 0, time.UTC) }
	rs := func(pairs ...int) []Range {
		var out []Range
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Range{StartLine: pairs[i], EndLine: pairs[i+1], ContentHash: HashLines(fmt.Sprint(pairs[i]))})
		}
		return out
	}
	deny := func(code string) json.RawMessage { return json.RawMessage(`{"error":"` + code + `"}`) }
	ins := []RecordInput{
		{Time: at(0, 0), Path: "src/auth/jwt.go", Ranges: rs(1, 40), Meta: Meta{Intent: "INT-001", Mutation: MutationCreate}},
		{Time: at(1, 0), Path: "src/auth/jwt.go", Ranges: rs(12, 20, 31, 31), Meta: Meta{Intent: "INT-001", Mutation: MutationModify}},
		{Time: at(2, 0), Path: "src/middleware/jwt.go", Ranges: rs(1, 15), Meta: Meta{Intent: "INT-001", Mutation: MutationCreate}},
		{Time: at(3, 0), Path: "src/billing/tax.go", Meta: Meta{Intent: "INT-001", Decision: DecisionDeny, Denial: deny("SCOPE_VIOLATION")}},
		{Time: at(4, 0), Meta: Meta{Decision: DecisionDeny, Denial: deny("NO_ACTIVE_INTENT")}},
		{Time: at(5, 0), Path: "src/legacy/x.go", Ranges: rs(3, 4), Meta: Meta{Intent: "INT-009", Mutation: MutationModify}},
		{Time: at(6, 0), Path: "src/auth/old.go", Meta: Meta{Intent: "INT-001", Mutation: MutationDelete, DeletedLines: 12}},
		{Time: at(7, 0), Path: "src/billing/tax.go", Ranges: rs(5, 6), Meta: Meta{Intent: "INT-001", Decision: DecisionViolation}},
		{Time: at(8, 0), Path: "docs/a|b.md", Ranges: rs(2, 2), Meta: Meta{Intent: "INT-003", Mutation: MutationModify}},
		{Time: at(9, 0), Path: "src/auth/session.go", Meta: Meta{Intent: "INT-001", Mutation: MutationModify, DeletedLines: 4}},
		{Time: at(10, 0), Path: "src/auth/../../etc/passwd", Meta: Meta{Intent: "INT-001", Decision: DecisionDeny, Denial: deny("PATH_ESCAPE")}},
		// From a branch merged later: older than record 2, so not the
		// latest change of src/auth/jwt.go.
		{Time: at(0, 30), Path: "src/auth/jwt.go", Ranges: rs(99, 99), Meta: Meta{Intent: "INT-001", Mutation: MutationModify}},
	}
	recs := make([]*Record, len(ins))
	for i, in := range ins {
		in.Model, in.ToolVersion, in.Meta.Session, in.Meta.Tool = "anthropic/claude-opus-4-5", "test", "s1", "write_to_file"
		rec, err := NewRecord(in)
		if err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		rec.ID = fmt.Sprintf("01950000-0000-7000-8000-0000000000%02x", i+1)
		recs[i] = rec
	}
	return recs
}

// intentMapTestLedger writes the records to orchDir's ledger, calling after
// (if not nil) after each append.
func intentMapTestLedger(t testing.TB, orchDir string, shape RecordShape, recs []*Record, after func(rec *Record, line []byte)) {
	t.Helper()
	l, err := OpenLedger(filepath.Join(orchDir, LedgerName))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Shape = shape
	for _, rec := range recs {
		line, err := l.AppendLine(rec)
		if err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(rec, line)
		}
	}
}

func intentMapTestRead(t testing.TB, orchDir string) (md, summary []byte) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(orchDir, IntentMapName))
	if err != nil {
		t.Fatal(err)
	}
	summary, err = os.ReadFile(filepath.Join(orchDir, IntentMapSummaryName))
	// The MAC line differs between workspaces (each has its own key).
	summary, _, _ = bytes.Cut(summary, []byte("\nhmac-sha256:"))
	if err != nil {
		t.Fatal(err)
	}
	return md, summary
}

func TestIntentMapGolden(t *testing.T) {
	intents := intentMapTestIntents()
	orch := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, orch, ShapeAgentTrace, intentMapTestRecords(t), nil)
	if err := RebuildIntentMap(orch, intents, filepath.Join(orch, LedgerName)); err != nil {
		t.Fatal(err)
	}
	md, summary := intentMapTestRead(t, orch)
	if intentMapUpdate.String() == "true" {
		if err := os.WriteFile(intentMapGolden, md, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(intentMapGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, golden) {
		t.Fatalf("intent_map.md differs from %s (run with -update):\n%s", intentMapGolden, md)
	}

	t.Run("incremental updates give the same bytes", func(t *testing.T) {
		orch2 := filepath.Join(t.TempDir(), ".orchestration")
		intentMapTestLedger(t, orch2, ShapeAgentTrace, intentMapTestRecords(t), func(rec *Record, line []byte) {
			if err := UpdateIntentMap(orch2, intents, rec, line); err != nil {
				t.Fatal(err)
			}
		})
		md2, summary2 := intentMapTestRead(t, orch2)
		if !bytes.Equal(md2, md) {
			t.Errorf("incremental map differs from the rebuilt one:\n%s\n%s", md2, md)
		}
		// The summary file may lag the ledger by a few records (it is
		// rewritten every intentMapLag records); with the records after
		// it folded in, it is the rebuilt one.
		key, err := cachedWorkspaceKey(filepath.Dir(orch2))
		if err != nil {
			t.Fatal(err)
		}
		sum := intentMapLoad(filepath.Join(orch2, IntentMapSummaryName), key)
		if sum == nil {
			t.Fatalf("summary does not load: %s", summary2)
		}
		f, err := os.Open(filepath.Join(orch2, LedgerName))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, _, err := sum.catchUp(f, nil); err != nil {
			t.Fatal(err)
		}
		caught, _ := json.Marshal(sum)
		// The file is the JSON line, then its MAC line.
		rebuilt, _, _ := bytes.Cut(summary, []byte("\n"+intentMapMACPrefix))
		if !bytes.Equal(caught, rebuilt) {
			t.Errorf("lagging summary plus the ledger differs from the rebuilt one:\n%s\n%s", caught, summary)
		}
	})
	t.Run("catching up on many records", func(t *testing.T) {
		orch3 := filepath.Join(t.TempDir(), ".orchestration")
		recs := intentMapTestRecords(t)
		intentMapTestLedger(t, orch3, ShapeAgentTrace, recs[:3], func(rec *Record, line []byte) {
			if err := UpdateIntentMap(orch3, intents, rec, line); err != nil {
				t.Fatal(err)
			}
		})
		intentMapTestLedger(t, orch3, ShapeAgentTrace, recs[3:], nil)
		if err := UpdateIntentMap(orch3, intents, nil, nil); err != nil {
			t.Fatal(err)
		}
		if md3, _ := intentMapTestRead(t, orch3); !bytes.Equal(md3, md) {
			t.Errorf("caught-up map differs:\n%s", md3)
		}
	})
	t.Run("seed shape", func(t *testing.T) {
		orch4 := filepath.Join(t.TempDir(), ".orchestration")
		intentMapTestLedger(t, orch4, ShapeSeed, intentMapTestRecords(t), nil)
		if err := UpdateIntentMap(orch4, intents, nil, nil); err != nil {
			t.Fatal(err)
		}
		if md4, _ := intentMapTestRead(t, orch4); !bytes.Equal(md4, md) {
			t.Errorf("map of a seed-shaped ledger differs:\n%s", md4)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		var sum IntentMapSummary
		if err := json.Unmarshal(summary, &sum); err != nil {
			t.Fatal(err)
		}
		reversed := intentMapTestIntents()
		for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
			reversed[i], reversed[j] = reversed[j], reversed[i]
		}
		for range 5 {
			if got := RenderIntentMap(reversed, &sum); !bytes.Equal(got, md) {
				t.Fatalf("RenderIntentMap differs between runs:\n%s", got)
			}
		}
	})
}

// When the ledger no longer starts with what the summary folded (a merge
// rewrote it) or the summary is damaged, the map is rebuilt.
func TestIntentMapRebuildsWhenOutOfDate(t *testing.T) {
	intents := intentMapTestIntents()
	recs := intentMapTestRecords(t)
	orch := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, orch, ShapeAgentTrace, recs, func(rec *Record, line []byte) {
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	})
	ledger := filepath.Join(orch, LedgerName)

	// The ledger is replaced by one with only some of the records.
	os.Remove(ledger)
	intentMapTestLedger(t, orch, ShapeAgentTrace, []*Record{recs[0], recs[5], recs[8]}, nil)
	if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := intentMapTestRead(t, orch)
	ref := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, ref, ShapeAgentTrace, []*Record{recs[0], recs[5], recs[8]}, nil)
	if err := RebuildIntentMap(ref, intents, filepath.Join(ref, LedgerName)); err != nil {
		t.Fatal(err)
	}
	want, _ := intentMapTestRead(t, ref)
	if !bytes.Equal(got, want) {
		t.Errorf("after the ledger was replaced:\n%s\nwant\n%s", got, want)
	}

	// A damaged summary.
	os.WriteFile(filepath.Join(orch, IntentMapSummaryName), []byte(`{"format":1,"intents":`), 0o644)
	if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := intentMapTestRead(t, orch); !bytes.Equal(got, want) {
		t.Errorf("after the summary was damaged:\n%s", got)
	}

	// No ledger at all.
	os.Remove(ledger)
	if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := intentMapTestRead(t, orch); !bytes.Contains(got, []byte("(0 records)")) {
		t.Errorf("without a ledger:\n%s", got)
	}
}

// An update reads only what it has not folded yet: damage before the last
// folded line (the line itself intact) does not reach the map until a
// rebuild.
func TestIntentMapUpdateDoesNotReread(t *testing.T) {
	intents := intentMapTestIntents()
	recs := intentMapTestRecords(t)
	orch := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, orch, ShapeAgentTrace, recs[:4], func(rec *Record, line []byte) {
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	})
	ledger := filepath.Join(orch, LedgerName)
	b, _ := os.ReadFile(ledger)
	damaged := bytes.Replace(b, []byte(`"src/middleware/jwt.go"`), []byte(`"src/middleware/JWT.go"`), 1)
	if bytes.Equal(damaged, b) {
		t.Fatal("no damage done")
	}
	os.WriteFile(ledger, damaged, 0o644)
	intentMapTestLedger(t, orch, ShapeAgentTrace, recs[4:5], func(rec *Record, line []byte) {
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	})
	md, _ := intentMapTestRead(t, orch)
	if !bytes.Contains(md, []byte("| src/middleware/jwt.go |")) || !bytes.Contains(md, []byte("(5 records)")) {
		t.Errorf("the update reread the ledger:\n%s", md)
	}
	// A rebuild reads the whole ledger, and shows only one that verifies:
	// the edited line breaks the chain, so the map stays as it was.
	if err := RebuildIntentMap(orch, intents, ledger); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("RebuildIntentMap of a damaged ledger = %v, want a refusal", err)
	}
	if md2, _ := intentMapTestRead(t, orch); !bytes.Equal(md2, md) {
		t.Errorf("the refused rebuild rewrote the map:\n%s", md2)
	}
}

// Editing the derived summary (intent_map.json) never reaches the committed
// intent_map.md: without the workspace key's MAC the summary is rebuilt from
// the ledger.
func TestIntentMapForgedSummaryIgnored(t *testing.T) {
	intents := intentMapTestIntents()
	recs := intentMapTestRecords(t)
	orch := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, orch, ShapeAgentTrace, recs[:4], func(rec *Record, line []byte) {
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	})
	// The summary file may lag the ledger (intentMapLag): a rebuild writes
	// all of it.
	if err := RebuildIntentMap(orch, intents, filepath.Join(orch, LedgerName)); err != nil {
		t.Fatal(err)
	}
	md, _ := intentMapTestRead(t, orch)
	summary, _ := os.ReadFile(filepath.Join(orch, IntentMapSummaryName))
	forged := bytes.ReplaceAll(summary, []byte("src/middleware/jwt.go"), []byte("src/FORGED.go"))
	if bytes.Equal(forged, summary) {
		t.Fatal("nothing forged")
	}
	// Both with the old MAC line and with none.
	body, _, _ := bytes.Cut(forged, []byte("\nhmac-sha256:"))
	for _, f := range [][]byte{forged, append(body, '\n')} {
		os.WriteFile(filepath.Join(orch, IntentMapSummaryName), f, 0o644)
		if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := intentMapTestRead(t, orch)
		if bytes.Contains(got, []byte("FORGED")) || !bytes.Equal(got, md) {
			t.Fatalf("a forged summary reached intent_map.md:\n%s", got)
		}
	}
}

func TestRenderIntentMapEscapes(t *testing.T) {
	sum := newIntentMapSummary()
	sum.Intents["X"] = &IntentMapIntent{Files: map[string]*IntentMapEntry{
		"a|b*c`d<e>[f]\\g\nh.go": {Ranges: []Range{{StartLine: 1, EndLine: 1}}, Trace: "t", Time: time.Unix(0, 0)},
	}}
	md := RenderIntentMap([]Intent{{ID: "X", Name: "n\nm", Status: StatusPending, OwnedScope: []string{"a`b/**"}}}, sum)
	for _, want := range []string{
		"## X — n m\n",
		"- Scope: `` a`b/** ``\n",
		"| a\\|b\\*c\\`d\\<e\\>\\[f\\]\\\\g h.go | 1 | t | 1970-01-01T00:00:00Z |\n",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("RenderIntentMap lacks %q:\n%s", want, md)
		}
	}
}

// TestIntentMapCacheNoticesOthers: a process keeps the summary and the map it
// wrote in memory, but a change of either file by anyone else (or its loss)
// is noticed at the next update, which writes the map the ledger gives.
func TestIntentMapCacheNoticesOthers(t *testing.T) {
	intents := intentMapTestIntents()
	orch := filepath.Join(t.TempDir(), ".orchestration")
	intentMapTestLedger(t, orch, ShapeAgentTrace, intentMapTestRecords(t), func(rec *Record, line []byte) {
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	})
	want, _ := intentMapTestRead(t, orch)
	mdPath := filepath.Join(orch, IntentMapName)
	sumPath := filepath.Join(orch, IntentMapSummaryName)
	for name, damage := range map[string]func(){
		"map deleted":              func() { os.Remove(mdPath) },
		"map rewritten, same size": func() { os.WriteFile(mdPath, bytes.Repeat([]byte("x"), len(want)), 0o644) },
		"summary deleted":          func() { os.Remove(sumPath) },
		"summary emptied":          func() { os.WriteFile(sumPath, nil, 0o644) },
		"summary of another ledger": func() {
			os.WriteFile(sumPath, []byte(`{"format":1,"records":1,"offset":5,"last_line":"sha256:00","intents":{}}`), 0o644)
		},
		"both deleted":                  func() { os.Remove(mdPath); os.Remove(sumPath) },
		"map replaced by an older copy": func() { os.WriteFile(mdPath, []byte("# Intent map\n"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			damage()
			if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := intentMapTestRead(t, orch); !bytes.Equal(got, want) {
				t.Errorf("after %s the map is:\n%s\nwant\n%s", name, got, want)
			}
		})
	}
}
