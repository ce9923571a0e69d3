package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSplitArgs checks the one-pass argument splitter against encoding/json:
// whatever it accepts, encoding/json decodes to the same members with the
// same raw values; whatever encoding/json refuses, it refuses too.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`{}`, ` { } `, `{"path":"a.go","content":"x\ny"}`, `{"a":"1","a":"2"}`,
		`{"k\u0041":"\ud83d\ude00"}`, `{"a":1}`, `{"a":"b",}`, `{"a":"b"} x`, `{"a" "b"}`, `{"a":"\x"}`,
		`{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":"b"`, `["a"]`, `{"a":{"b":"c"}}`, "{\"\xff\":\"\xfe\"}",
		"\t{\n\"a\"\r:\"b\" }\n", `{"a":"\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(raw, &want)
		got, ok := splitArgs(raw)
		if !ok {
			return // encoding/json decides, as before
		}
		if wantErr != nil {
			t.Fatalf("splitArgs(%q) accepted what encoding/json refuses: %v", raw, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("splitArgs(%q) = %d members, encoding/json %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if g, has := got[k]; !has || !bytes.Equal(g, v) {
				t.Fatalf("splitArgs(%q)[%q] = %q, encoding/json %q", raw, k, g, v)
			}
		}
	})
}

// Every argument object of strings, the common shape, takes the fast path.
func TestSplitArgsTakesStringObjects(t *testing.T) {
	for _, s := range []string{`{}`, `{"path":"src/a.go","content":"line\n\"q\"\u00e9"}`, " {\"a\" : \"b\" ,\"c\":\"d\"}\n"} {
		if _, ok := splitArgs([]byte(s)); !ok {
			t.Errorf("splitArgs(%q) fell back to encoding/json", s)
		}
	}
}

// FuzzSplitObject checks the call-line splitter against encoding/json:
// whatever it accepts, encoding/json decodes to the same members with the
// same raw values, and each value that is an object is itself an object of
// strings.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"id":"1","args":{"path":"a","content":"x\ny"},"agent":{"name":"n"}}`,
		`{"a":"1","a":"2"}`, `{"a":{"b":{"c":"d"}}}`, `{"a":{"b":1}}`, `{"a":{}} x`, `{"a":{"b":"c",}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, nested, ok := SplitObject(raw)
		if !ok {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("SplitObject(%q) accepted what encoding/json refuses: %v", raw, err)
		}
		if len(got) != len(want) {
			t.Fatalf("SplitObject(%q) = %d members, encoding/json %d", raw, len(got), len(want))
		}
		for k, v := range want {
			g, has := got[k]
			if !has || !bytes.Equal(g, v) {
				t.Fatalf("SplitObject(%q)[%q] = %q, encoding/json %q", raw, k, g, v)
			}
			if g[0] == '{' {
				var inner map[string]string
				if err := json.Unmarshal(g, &inner); err != nil {
					t.Fatalf("SplitObject(%q)[%q] is not an object of strings: %v", raw, k, err)
				}
				var innerRaw map[string]json.RawMessage
				json.Unmarshal(g, &innerRaw)
				if len(nested[k]) != len(innerRaw) {
					t.Fatalf("SplitObject(%q) nested[%q] = %q, encoding/json %q", raw, k, nested[k], innerRaw)
				}
				for ik, iv := range innerRaw {
					if !bytes.Equal(nested[k][ik], iv) {
						t.Fatalf("SplitObject(%q) nested[%q][%q] = %q, encoding/json %q", raw, k, ik, nested[k][ik], iv)
					}
				}
			}
		}
	})
}
