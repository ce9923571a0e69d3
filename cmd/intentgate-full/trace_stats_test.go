package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit"
)

// TestTraceStatsMatchesDecoder runs `trace stats` through the binary on a
// ledger of governed writes (an allowed write, a refusal, another write)
// with hostile lines appended after them: a duplicated key, a key in
// another case, an escape, whitespace between tokens, a line that is not
// JSON and a torn tail. The counts must be what the full decoder makes of
// every whole line (ParseRecord and EntryOf, counted here in the test),
// both on the first run (a full count) and from the kept count.
func TestTraceStatsMatchesDecoder(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "vendor/model-one", selectCall,
		writeCall("src/a.go", "package a\n\nvar A = 1\n"),
		"!"+writeCall("docs/x.md", "outside the scope\n"),
		writeCall("src/b.go", "package a\n"))
	ledger := filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	data, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	first := string(data[:bytes.IndexByte(data, '\n')])
	swap := func(old, new string) string {
		t.Helper()
		if !strings.Contains(first, old) {
			t.Fatalf("the first record has no %s: %s", old, first)
		}
		return strings.Replace(first, old, new, 1)
	}
	hostile := []string{
		swap(`"intent":"INT-001"`, `"intent":"INT-001","intent":"INT-666"`),
		swap(`"intent":"INT-001"`, `"intent":"INT-001","INTENT":"INT-888"`),
		swap(`"intent":"INT-001"`, `"intent":"INT\u002d001"`),
		swap(`{"version"`, `{ "version"`),
		`{"version":`,
	}
	f, err := os.OpenFile(ledger, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(hostile, "\n") + "\n" + `{"version":"0.1.0","id":"`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The full decoder, line by line.
	type row struct {
		Key     string `json:"key"`
		Records int    `json:"records"`
		Changes int    `json:"changes"`
		Lines   int    `json:"lines_added"`
		Denials int    `json:"denials"`
	}
	type counts struct {
		Lines      int   `json:"lines"`
		Records    int   `json:"records"`
		Unparsable int   `json:"unparsable"`
		ByIntent   []row `json:"by_intent"`
	}
	data, err = os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	want := counts{}
	rows := map[string]*row{}
	var keys []string
	whole := data[:bytes.LastIndexByte(data, '\n')+1]
	for _, line := range strings.Split(strings.TrimSuffix(string(whole), "\n"), "\n") {
		want.Lines++
		rec, err := orchestration.ParseRecord([]byte(line))
		if err != nil {
			want.Unparsable++
			continue
		}
		want.Records++
		e := audit.EntryOf(0, rec)
		r := rows[e.Intent]
		if r == nil {
			r = &row{Key: e.Intent}
			rows[e.Intent] = r
			keys = append(keys, e.Intent)
		}
		r.Records++
		if e.IsDenial() {
			r.Denials++
			continue
		}
		r.Changes++
		for _, f := range e.Files {
			r.Lines += f.Lines
		}
	}
	// By hand: 3 governed records, 4 hostile records, 1 line not JSON;
	// the duplicated key is INT-666, the key in capitals INT-888.
	if want.Lines != 8 || want.Records != 7 || want.Unparsable != 1 || rows["INT-666"] == nil || rows["INT-888"] == nil || rows["INT-001"].Records != 5 {
		t.Fatalf("the decoder reads %+v, rows %v", want, keys)
	}
	for _, k := range []string{"INT-001", "INT-666", "INT-888"} {
		want.ByIntent = append(want.ByIntent, *rows[k])
	}

	kept := filepath.Join(ws, ".orchestration", "index", "stats.bin")
	for _, step := range []string{"full count", "kept count"} {
		if _, err := os.Stat(kept); (step == "kept count") != (err == nil) {
			t.Fatalf("%s: stats.bin present: %v", step, err == nil)
		}
		out, code := runIG(t, "trace", "stats", "-w", ws, "--json")
		var got counts
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%s: stats --json: exit %d, %v\n%s", step, code, err, out)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: stats %+v, the decoder %+v", step, got, want)
		}
	}
}
