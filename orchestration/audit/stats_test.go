package audit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// statsByEntries is what ComputeStats counts, the plain way: every line
// through ParseRecord and EntryOf, one at a time.
func statsByEntries(t testing.TB, path string) *Stats {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, full := range bytes.SplitAfter(data, []byte{'\n'}) {
		if len(full) == 0 || full[len(full)-1] != '\n' {
			continue // a torn tail
		}
		lines = append(lines, trimCR(full[:len(full)-1]))
	}
	return statsByLines(lines)
}

// statsByLines counts lines (without their newlines) the plain way.
func statsByLines(lines [][]byte) *Stats {
	s := &Stats{}
	intents, models, tools := statTable{}, statTable{}, statTable{}
	for n, line := range lines {
		s.Lines++
		rec, err := orchestration.ParseRecord(line)
		if err != nil {
			s.Unparsable++
			continue
		}
		s.Records++
		e := EntryOf(n+1, rec)
		intents.add(e.Intent, &e)
		models.add(e.Model, &e)
		tools.add(e.Tool, &e)
	}
	s.ByIntent, s.ByModel, s.ByTool = intents.rows(), models.rows(), tools.rows()
	return s
}

// statsExtraLines are lines a stats test mixes into a ledger: other
// writers' lines, damaged lines, records without intentgate's metadata and
// refusals with denials of every shape.
func statsExtraLines(t testing.TB) [][]byte {
	t.Helper()
	denials := []string{
		`{"error":"STALE_FILE","message":"read it again"}`,
		`{"message":"m","error":"NOT_READ"}`,
		`{"ERROR":"UPPER","message":"x"}`,
		`{"error":"A","Error":"B"}`,
		`{"error":5,"message":"x"}`,
		`{"error":"X","message":7}`,
		`{"error":"X","n":[1,{"a":null}]}`,
		`{"error":null}`,
		`{}`,
		`{"error":"é"}`,
		`{"message":"no code"}`,
	}
	extra := [][]byte{
		[]byte("{not a record\n"),
		[]byte("\n"),
		// another tool's record: its intent is in a related resource.
		[]byte(`{"version":"0.1.0","id":"0190a3c4-0000-7000-8000-000000000002","timestamp":"2026-01-01T00:00:00Z","files":[{"path":"a.go","conversations":[{"contributor":{"type":"ai","model_id":"m/x"},"ranges":[{"start_line":1,"end_line":4}],"related":[{"type":"intent","url":"intent:INT-9%2F1"}]}]}]}` + "\n"),
		[]byte(`{"version":"0.1.0","id":"0190a3c4-0000-7000-8000-000000000003","timestamp":"2026-01-01T00:00:00Z","files":[{"path":"b.go","conversations":[{"ranges":[{"start_line":2,"end_line":2}]}]},{"path":"b.go","conversations":[]}]}` + "\n"),
	}
	for i, d := range denials {
		rec := testRecord(t, 4) // a refusal
		rec.Meta.Denial = json.RawMessage(d)
		rec.Meta.Tool = []string{"write_to_file", "apply_diff"}[i%2]
		b, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, append(b, '\n'))
	}
	return extra
}

// TestStatsMatchEntries holds ComputeStats (records of intentgate's writer
// read in place, on several workers) to the plain count, on ledgers with
// other writers' lines, damaged lines, refusals with denials of every
// shape and records without intentgate's metadata.
func TestStatsMatchEntries(t *testing.T) {
	_, ledger := testWorkspace(t, 60)
	lines := readLines(t, ledger)
	extra := statsExtraLines(t)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 40 {
		mut := mutateLedger(t, r, lines)
		for _, e := range extra {
			at := r.IntN(len(mut) + 1)
			mut = append(mut[:at], append([][]byte{e}, mut[at:]...)...)
		}
		if err := os.WriteFile(path, bytes.Join(mut, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		want := statsByEntries(t, path)
		got, err := ComputeStats(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Fatalf("round %d: stats differ:\n got %s\nwant %s", round, g, w)
		}
		if round == 0 && (want.Unparsable == 0 || len(want.ByIntent) < 3) {
			t.Fatalf("the ledger does not exercise the count: %+v", want)
		}
	}
}

// denialCodeSlow is how EntryOf reads a denial's code.
func denialCodeSlow(d []byte) string {
	var v struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(d, &v) != nil {
		return ""
	}
	return v.Error
}

func FuzzDenialCode(f *testing.F) {
	for _, d := range []string{`{"error":"A","message":"b"}`, `{"Error":"A","eRRor":"B"}`, `{"error":1}`, `{}`, `{"error":"x","message":null}`, `{"a":"b"}`} {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		if !json.Valid(d) {
			return // denials reach it compacted and valid
		}
		if got, want := string(denialCodeOf(d)), denialCodeSlow(d); got != want {
			t.Fatalf("denialCodeOf(%s) = %q, EntryOf reads %q", d, got, want)
		}
	})
}
