package orchestration

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// canonicalSamples are lines intentgate's writer makes: a change with a
// revision, a refusal with its denial, a delete, a record without intent or
// session, a command's changes.
func canonicalSamples(t testing.TB) [][]byte {
	t.Helper()
	ins := []RecordInput{
		{Time: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), Revision: "0123456789abcdef0123456789abcdef01234567", ToolVersion: "1.2.3", Model: "anthropic/claude-opus-4-5", Path: "src/a b/ü.go",
			Ranges: []Range{{StartLine: 1, EndLine: 3, ContentHash: RangeHash([]byte("a\nb\nc\n"), 1, 3)}, {StartLine: 10, EndLine: 10}},
			Meta:   Meta{Intent: "INT-001", Session: "s/1 x", CallID: "c1", Tool: "write_to_file", Agent: "claude-code", Mutation: MutationModify, BeforeSHA256: strings.Repeat("a", 64), AfterSHA256: strings.Repeat("b", 64), DeletedLines: 4}},
		{Time: time.Date(2026, 5, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), Path: "secret/.env", Model: "openai/gpt-5",
			Meta: Meta{Intent: "INT-002", Session: "s2", CallID: "c2", Tool: "write_to_file", Decision: DecisionDeny, Denial: json.RawMessage(`{ "error": "SCOPE_VIOLATION", "message": "outside <scope> & more", "n": [1, 2.5e3] }`)}},
		{Time: time.Date(2026, 5, 1, 0, 0, 1, 0, time.UTC), Path: "gone.txt", Meta: Meta{Intent: "INT-3", Session: "s3", Tool: "delete_file", Mutation: MutationDelete, Recovered: "crash before the record"}},
		{Time: time.Date(2026, 5, 1, 0, 0, 2, 500, time.UTC), Path: "x.go", Ranges: []Range{{StartLine: 2, EndLine: 5}}, Meta: Meta{Tool: "execute_command", Command: "sed -i 's/a/b/' x.go", Mutation: MutationCreate}},
		{Time: time.Date(2026, 5, 1, 0, 0, 3, 0, time.UTC), Meta: Meta{Session: "s4", Tool: "write_to_file", Decision: DecisionDeny, Denial: json.RawMessage(`{"error":"NO_ACTIVE_INTENT"}`)}},
	}
	var out [][]byte
	for i, in := range ins {
		rec, err := NewRecord(in)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		rec.Meta.Prev = "sha256:" + strings.Repeat("0", 64)
		b, err := MarshalShape(rec, ShapeAgentTrace)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// checkCanonical holds ParseCanonical's promise for one line: when it reads
// the line, ParseRecord reads the same record and the writer writes the
// line back.
func checkCanonical(t *testing.T, line []byte) bool {
	t.Helper()
	rec, ok := ParseCanonical(line)
	if !ok {
		return false
	}
	slow, err := ParseRecord(line)
	if err != nil {
		t.Fatalf("ParseCanonical read a line ParseRecord refuses (%v): %s", err, line)
	}
	if !reflect.DeepEqual(rec, slow) {
		t.Fatalf("ParseCanonical and ParseRecord differ on %s:\n%#v\n%#v", line, rec, slow)
	}
	again, err := MarshalShape(rec, ShapeAgentTrace)
	if err != nil || !bytes.Equal(again, line) {
		t.Fatalf("not the writer's line (%v):\n%s\n%s", err, line, again)
	}
	return true
}

func TestParseCanonicalReadsWriterLines(t *testing.T) {
	for i, line := range canonicalSamples(t) {
		if !checkCanonical(t, line) {
			t.Errorf("sample %d: the writer's own line is not read fast: %s", i, line)
		}
	}
}

func TestParseCanonicalLeavesOthersToParseRecord(t *testing.T) {
	line := canonicalSamples(t)[0]
	edits := map[string][]byte{
		"space after a colon":        bytes.Replace(line, []byte(`"id":`), []byte(`"id": `), 1),
		"keys reordered":             bytes.Replace(line, []byte(`{"version":"0.1.0","id":`), []byte(`{"id":`), 1),
		"an escape in a string":      bytes.Replace(line, []byte(`"c1"`), []byte(`"c\u0031"`), 1),
		"an unknown key":             bytes.Replace(line, []byte(`"prev":`), []byte(`"x":1,"prev":`), 1),
		"uppercase contributor type": bytes.Replace(line, []byte(`"type":"ai"`), []byte(`"type":"AI"`), 1),
		"timestamp not in UTC":       bytes.Replace(line, []byte(`Z"`), []byte(`+00:00"`), 1),
		"zero-padded number":         bytes.Replace(line, []byte(`"end_line":3`), []byte(`"end_line":03`), 1),
		"empty optional string":      bytes.Replace(line, []byte(`"agent":"claude-code"`), []byte(`"agent":""`), 1),
		"other metadata":             bytes.Replace(line, []byte(`"metadata":{`), []byte(`"metadata":{"a":1,`), 1),
		"trailing byte":              append(bytes.Clone(line), ' '),
		"invalid UTF-8":              bytes.Replace(line, []byte("ü"), []byte{0xff}, 1),
		"range backwards":            bytes.Replace(line, []byte(`"start_line":10,"end_line":10`), []byte(`"start_line":10,"end_line":9`), 1),
	}
	for name, b := range edits {
		if bytes.Equal(b, line) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if checkCanonical(t, b) {
			t.Errorf("%s: read fast: %s", name, b)
		}
	}
}

func FuzzParseCanonical(f *testing.F) {
	for _, line := range canonicalSamples(f) {
		f.Add(line)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":"0.1.0","id":"00000000-0000-0000-0000-000000000000","timestamp":"2026-01-01T00:00:00Z","files":[]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkCanonical(t, line)
	})
}
