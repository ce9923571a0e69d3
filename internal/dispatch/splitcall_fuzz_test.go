package dispatch

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeCall is how a call line was read before splitCall: encoding/json's
// Decoder, unknown fields refused.
func decodeCall(line []byte) (Call, error) {
	var cl Call
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(&cl)
	return cl, err
}

// FuzzSplitCall checks the one-pass call reader against encoding/json:
// whatever splitCall accepts, encoding/json decodes to the same call with
// the same raw arguments; whatever encoding/json refuses, splitCall refuses.
func FuzzSplitCall(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","session":"s1","tool":"write_to_file","args":{"path":"a.go","content":"x\ny"},"agent":{"name":"a","model":"m"}}`,
		`{}`, ` {"tool":"t"} `, `{"tool":"t","tool":"u"}`, `{"ID":"1"}`, `{"id":1}`, `{"id":null}`,
		`{"args":"x"}`, `{"args":{"a":1}}`, `{"args":{"a":{"b":"c"}}}`, `{"agent":{"name":"a","x":"y"}}`,
		`{"agent":{"name":"a","name":"b"}}`, `{"agent":"a"}`, `{"tool":"t"} {"tool":"u"}`, `{"tool":"t"} x`,
		`{"\u0069d":"1"}`, `{"id":"\ud800"}`, "{\"id\":\"\xff\"}", `{"x":"y"}`, `{"args":{}}`, `{"args":{ }, "id" : "2" }`,
		`[]`, `"a"`, `{"id":"1",}`, `{"args":{"a":"b",}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, argm, ok := splitCall(line)
		if !ok {
			return // encoding/json decides, as before
		}
		if got.Args != nil {
			var want map[string]json.RawMessage
			if err := json.Unmarshal(got.Args, &want); err != nil || len(want) != len(argm) {
				t.Fatalf("splitCall(%q) args members %q, encoding/json %q (%v)", line, argm, want, err)
			}
			for k, v := range want {
				if !bytes.Equal(argm[k], v) {
					t.Fatalf("splitCall(%q) args[%q] = %q, encoding/json %q", line, k, argm[k], v)
				}
			}
		}
		want, err := decodeCall(line)
		if err != nil {
			t.Fatalf("splitCall(%q) accepted what encoding/json refuses: %v", line, err)
		}
		if got.ID != want.ID || got.Session != want.Session || got.Tool != want.Tool || got.Agent != want.Agent {
			t.Fatalf("splitCall(%q) = %+v, encoding/json %+v", line, got, want)
		}
		if !bytes.Equal(got.Args, want.Args) {
			t.Fatalf("splitCall(%q) args %q, encoding/json %q", line, got.Args, want.Args)
		}
	})
}

// The calls a front door sends take the fast path.
func TestSplitCallTakesCommonCalls(t *testing.T) {
	for _, s := range []string{
		`{"id":"1","session":"s1","tool":"write_to_file","args":{"path":"a.go","content":"x\ny\u00e9"},"agent":{"name":"a","model":"m"}}`,
		`{"id":"2","session":"s1","tool":"read_file","args":{"path":"README.md"}}`,
		`{"tool":"list_files"}`,
	} {
		cl, _, ok := splitCall([]byte(s))
		if !ok {
			t.Errorf("splitCall(%q) fell back to encoding/json", s)
			continue
		}
		want, _ := decodeCall([]byte(s))
		if cl.Tool != want.Tool || !bytes.Equal(cl.Args, want.Args) {
			t.Errorf("splitCall(%q) = %+v, want %+v", s, cl, want)
		}
	}
}
