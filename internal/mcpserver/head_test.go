package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// decodeHead is the reference: what encoding/json makes of a line.
func decodeHead(line []byte) (rpcHead, bool) {
	var h rpcHead
	if json.Unmarshal(line, &h) != nil {
		return rpcHead{}, false
	}
	return h, true
}

var headSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_to_file","arguments":{"path":"a","content":"x\"}\\\"{["}}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"\"id\":2,\"method\":\"x\""}]}}`,
	`{"method":"notifications/initialized","jsonrpc":"2.0"}`,
	`{"params":{"id":7,"method":"tools/call"},"id":null,"method":"ping"}`,
	`{"ID":3,"Method":"tools/call"}`,
	`{"id":1,"id":2,"method":"a","method":null}`,
	`{"id":1,"method":"a","method":"b"}`,
	`{"id":{"x":[1,2,{"y":"]}"}]},"method":"tools/call"}`,
	`{"i\u0064":9,"method":"tools/call"}`,
	`{"id":1,"method":"tools\/call"}`,
	`{"id":1,"method":5}`,
	`{"id":1,"method":"caf\u00e9"}`,
	`{"id":1,"method":"é"}`,
	`  { "id" : -1.5e3 , "method" : "x" }  `,
	`{}`,
	`{"id":1}{"id":2}`,
	`[{"id":1,"method":"tools/call"}]`,
	`null`,
	`{"id":1,"method":"tools/call"`,
	`{"a":"\\\\","id":4}`,
	`{"a":"\\","id":4}`,
	`{"id":true,"method":""}`,
}

// scanHead agrees with encoding/json on every valid line it reads alone.
func TestScanHead(t *testing.T) {
	for _, s := range headSeeds {
		checkHead(t, []byte(s))
	}
	// A large content is skipped, not decoded, and still read right.
	big := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"content":"` +
		strings.Repeat(`line \"quoted\" \\ and \n`, 4000) + `"}}}`
	h, ok := scanHead([]byte(big))
	if !ok || string(h.ID) != "42" || h.Method != "tools/call" {
		t.Errorf("scanHead(big) = %q %q %v, want 42 tools/call true", h.ID, h.Method, ok)
	}
	checkHead(t, []byte(big))
}

func checkHead(t *testing.T, line []byte) {
	t.Helper()
	got, ok := scanHead(line)
	if !ok || !json.Valid(line) {
		return // encoding/json decides, or the SDK ends the connection
	}
	want, wok := decodeHead(line)
	if !wok {
		t.Errorf("scanHead(%q) = %q %q, encoding/json refuses it", line, got.ID, got.Method)
		return
	}
	if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method {
		t.Errorf("scanHead(%q) = id %q method %q, want id %q method %q", line, got.ID, got.Method, want.ID, want.Method)
	}
}

// Every line the gate reads goes through rpcHeads, whose fast path must
// give what encoding/json gives.
func FuzzScanHead(f *testing.F) {
	for _, s := range headSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkHead(t, line)
		trimmed := bytes.TrimSpace(line)
		if !json.Valid(trimmed) || trimmed[0] == '[' {
			return // batches and broken lines are encoding/json's alone
		}
		got := rpcHeads(line)
		want, ok := decodeHead(trimmed)
		if !ok { // a member of the wrong type: no head at all
			if len(got) != 0 {
				t.Errorf("rpcHeads(%q) = %+v, want none", line, got)
			}
			return
		}
		if len(got) != 1 || !bytes.Equal(got[0].ID, want.ID) || got[0].Method != want.Method {
			t.Errorf("rpcHeads(%q) = %+v, want %+v", line, got, want)
		}
	})
}

// normalID spells plain ids as they are and the rest as encoding/json
// prints them.
func TestNormalID(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`1`, `1`}, {`0`, `0`}, {`"a-1"`, `"a-1"`}, {`1.0`, `1`}, {`1e2`, `100`},
		{`"\u0061"`, `"a"`}, {`"<"`, `"\u003c"`}, {`1234567890123456789`, `1234567890123456800`},
	} {
		if got := normalID(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("normalID(%s) = %s, want %s", tc.raw, got, tc.want)
		}
	}
}

// FuzzNormalID: the fast path spells an id as encoding/json would.
func FuzzNormalID(f *testing.F) {
	for _, s := range []string{`1`, `"x"`, `007`, `"a b"`, `123456789012345`, `1234567890123456`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !plainID([]byte(raw)) {
			return
		}
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			t.Fatalf("plainID(%q) but it is not JSON", raw)
		}
		b, _ := json.Marshal(v)
		if string(b) != raw {
			t.Errorf("plainID(%q), but encoding/json spells it %s", raw, b)
		}
	})
}
