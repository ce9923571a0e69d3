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

// canonTimestampSlow is canonTimestamp's definition: what the full reader
// accepts and the writer writes back unchanged.
func canonTimestampSlow(ts string) bool {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return false
	}
	t = t.UTC()
	return t.Year() >= 0 && t.Year() <= 9999 && t.Format(time.RFC3339Nano) == ts
}

func TestCanonTimestamp(t *testing.T) {
	for ts, want := range map[string]bool{
		"2026-01-02T03:04:05Z":            true,
		"2026-01-02T03:04:05.1Z":          true,
		"2026-01-02T03:04:05.123456789Z":  true,
		"2024-02-29T00:00:00Z":            true, // a leap day
		"2000-02-29T23:59:59Z":            true, // divisible by 400
		"0000-01-01T00:00:00Z":            true,
		"9999-12-31T23:59:59.999999999Z":  true,
		"1900-02-29T00:00:00Z":            false, // divisible by 100, not by 400
		"2023-02-29T00:00:00Z":            false,
		"2026-04-31T00:00:00Z":            false,
		"2026-01-02T03:04:05.10Z":         false, // a trailing zero the writer drops
		"2026-01-02T03:04:05.Z":           false,
		"2026-01-02T03:04:05.1234567891Z": false, // more digits than the writer writes
		"2026-01-02T24:00:00Z":            false,
		"2026-01-02T03:60:00Z":            false,
		"2026-01-02T03:04:60Z":            false, // no leap second
		"2026-13-02T03:04:05Z":            false,
		"2026-00-02T03:04:05Z":            false,
		"2026-01-00T03:04:05Z":            false,
		"2026-01-02T03:04:05+00:00":       false,
		"2026-01-02t03:04:05Z":            false,
		"2026-01-02T03:04:05,1Z":          false,
		"2026-1-02T03:04:05Z":             false,
		"+026-01-02T03:04:05Z":            false,
		"":                                false,
	} {
		if got := canonTimestamp([]byte(ts)); got != want {
			t.Errorf("canonTimestamp(%q) = %v, want %v", ts, got, want)
		}
		if slow := canonTimestampSlow(ts); slow != want {
			t.Errorf("the definition says %v for %q: the table is wrong", slow, ts)
		}
	}
}

func FuzzCanonTimestamp(f *testing.F) {
	f.Add("2026-01-02T03:04:05.123Z")
	f.Add("2024-02-29T00:00:00Z")
	f.Add("2026-01-02T03:04:05.10Z")
	f.Fuzz(func(t *testing.T, ts string) {
		if got, want := canonTimestamp([]byte(ts)), canonTimestampSlow(ts); got != want {
			t.Fatalf("canonTimestamp(%q) = %v, the definition says %v", ts, got, want)
		}
	})
}

// TestCanonViewReuse reads different lines into one view in turn: what a
// line leaves in the view's reused slices never shows in the next record.
func TestCanonViewReuse(t *testing.T) {
	samples := canonicalSamples(t)
	var v CanonView
	for round := 0; round < 2; round++ {
		for i := len(samples) - 1; i >= 0; i-- {
			if !v.Read(samples[i]) {
				t.Fatalf("sample %d not read", i)
			}
			want, err := ParseRecord(samples[i])
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Record(); !reflect.DeepEqual(got, want) {
				t.Fatalf("sample %d read after others differs:\n%#v\n%#v", i, got, want)
			}
		}
	}
}

// uuidTextSlow is uuidText's definition, character by character.
func uuidTextSlow(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func FuzzUUIDText(f *testing.F) {
	f.Add("01a20d41-76ee-70b6-9884-942397082bc3")
	f.Add("01a20d41-76ee-70b6-9884-94239708-bc3")
	f.Add("01A20D41-76EE-70B6-9884-942397082BC3")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := uuidText([]byte(s)), uuidTextSlow([]byte(s)); got != want {
			t.Fatalf("uuidText(%q) = %v, want %v", s, got, want)
		}
	})
}

// TestCanonStringsEveryByte puts every byte value at every place of an
// eight-byte block of a string: the fast reader reads the line exactly
// when ParseRecord reads it and the writer writes it back.
func TestCanonStringsEveryByte(t *testing.T) {
	line := canonicalSamples(t)[0]
	const marker = `"call_id":"c1"`
	at := bytes.Index(line, []byte(marker))
	if at < 0 {
		t.Fatal("no call_id in the sample")
	}
	for pos := 0; pos < 17; pos++ {
		for c := 0; c < 256; c++ {
			val := bytes.Repeat([]byte{'a'}, 17)
			val[pos] = byte(c)
			b := append(append(append([]byte{}, line[:at]...), `"call_id":"`+string(val)+`"`...), line[at+len(marker):]...)
			got := checkCanonical(t, b)
			// What the writer leaves unescaped: ASCII other than control
			// characters, a quote and a backslash (a lone byte >= 0x80 is
			// not UTF-8).
			plain := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			if got != plain {
				t.Fatalf("byte %#x at %d: read fast %v, want %v", c, pos, got, plain)
			}
		}
	}
}
