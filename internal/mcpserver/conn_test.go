package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzDecodeLine holds decodeLine to what the SDK's connection accepts of
// one line: a single message is read when it is one JSON value that
// jsonrpc.DecodeMessage reads (the SDK's streaming decoder refuses a second
// value on the line), and a batch when it is a JSON array of such messages.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"s":"}]\"["}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} x`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		`[]`, `{`, `{"a":"\\"}`, `"str"`, `1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return
		}
		got := decodeLine(line)
		if line[0] == '[' {
			var raws []json.RawMessage
			want := json.Unmarshal(line, &raws) == nil && len(raws) > 0
			for _, r := range raws {
				if _, err := jsonrpc.DecodeMessage(r); err != nil {
					want = false
				}
			}
			if (got.err == nil) != want || (want && len(got.msgs) != len(raws)) {
				t.Fatalf("decodeLine(%q): %d messages, error %v; want ok %v", line, len(got.msgs), got.err, want)
			}
			return
		}
		_, err := jsonrpc.DecodeMessage(line)
		want := err == nil && json.Valid(line)
		if (got.err == nil) != want {
			t.Fatalf("decodeLine(%q): error %v; DecodeMessage %v, one JSON value %v", line, got.err, err, json.Valid(line))
		}
	})
}
