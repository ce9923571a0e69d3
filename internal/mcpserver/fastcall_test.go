package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestParseToolCall(t *testing.T) {
	ok := []struct {
		line           string
		id, name, args string
		meta           string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`, `7`, "read_file", `{"path":"a"}`, ""},
		{` { "params" : { "arguments" : { } , "_meta" : {"k":[1,{"x":"}"}]} , "name" : "t" } , "method" : "tools/call" , "id" : "a-b.c:d_e" , "jsonrpc" : "2.0" } `, `"a-b.c:d_e"`, "t", `{ }`, `{"k":[1,{"x":"}"}]}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"content":"a\"}\\\n\u00e9<&>"}}}`, `1`, "w", `{"content":"a\"}\\\n\u00e9<&>"}`, ""},
	}
	for _, c := range ok {
		tc, good := parseToolCall([]byte(c.line))
		if !good || string(tc.id) != c.id || tc.name != c.name || string(tc.args) != c.args || string(tc.meta) != c.meta {
			t.Errorf("%s: got %v id %s name %q args %s meta %s", c.line, good, tc.id, tc.name, tc.args, tc.meta)
		}
	}
	deep := strings.Repeat("[", 998) + strings.Repeat("]", 998)
	for _, line := range []string{
		``,
		`[]`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{}}} x`,  // trailing data
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{}}}{}`,  // two values
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{}}`,     // not closed
		`{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{}}}`,    // version
		`{"id":7,"method":"tools/call","params":{"name":"r","arguments":{}}}`,                    // no version
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"r","arguments":{}}}`,           // notification
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"r","arguments":{}}}`, // null id
		`{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":{"name":"r","arguments":{}}}`,   // not a plain id
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"r","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"","method":"tools/call","params":{"name":"r","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a b","method":"tools/call","params":{"name":"r","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"name":"r","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"r","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"r","arguments":{}}}`, // duplicate
		`{"jsonrpc":"2.0","ID":7,"method":"tools/call","params":{"name":"r","arguments":{}}}`,        // case
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{}},"x":1}`,  // extra member
		`{"jsonrpc":"2.0","i\u0064":7,"method":"tools/call","params":{"name":"r","arguments":{}}}`,   // escaped name
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r"}}`,                       // no arguments
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}`,                   // no name
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r\u005f","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"é","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":1,"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":[]}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":null}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{"a":}}}`, // invalid
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{"a":tru}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{},"_meta":null}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{},"_meta":{"a":[}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{},"task":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{"d":` + deep + `}}}`, // 1001 deep
	} {
		if _, good := parseToolCall([]byte(line)); good {
			t.Errorf("taken: %.200s", line)
		}
	}
	// 1000 deep is what the SDK still reads.
	ok1000 := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r","arguments":{"d":` + deep[1:len(deep)-1] + `}}}`
	if _, good := parseToolCall([]byte(ok1000)); !good {
		t.Error("1000 deep refused")
	}
	if _, err := jsonrpc.DecodeMessage([]byte(ok1000)); err != nil {
		t.Errorf("the SDK refuses 1000 deep: %v", err)
	}
	if _, err := jsonrpc.DecodeMessage([]byte(ok1000[:len(ok1000)-3] + `,"e":[]}}}`)); err != nil {
		t.Errorf("the SDK: %v", err)
	}
}

// FuzzParseToolCall: a line parseToolCall takes is one the SDK reads as a
// tools/call request with the same id, name, arguments and _meta.
func FuzzParseToolCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"_meta":{"a":[1,2]},"name":"w","arguments":{"c":"\"}\\"}}}`,
		`{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "r" , "arguments" : { "a" : [ ] } } }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		tc, ok := parseToolCall(line)
		if !ok {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("took invalid JSON %q", line)
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("took %q, which the SDK refuses: %v", line, err)
		}
		req, isReq := msg.(*jsonrpc.Request)
		if !isReq || req.Method != "tools/call" || !req.ID.IsValid() {
			t.Fatalf("took %q: the SDK reads %#v", line, msg)
		}
		if key, ok := idKey(req.ID); !ok || key != string(tc.id) {
			t.Fatalf("took %q with id %s: the SDK reads %v", line, tc.id, req.ID.Raw())
		}
		var p struct {
			Meta      json.RawMessage `json:"_meta"`
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == nil {
			t.Fatalf("took %q: params %v", line, err)
		}
		if *p.Name != tc.name || !bytes.Equal(p.Arguments, tc.args) || !bytes.Equal(p.Meta, tc.meta) {
			t.Fatalf("took %q as %q %s %s: the SDK's params are %q %s %s", line, tc.name, tc.args, tc.meta, *p.Name, p.Arguments, p.Meta)
		}
	})
}

// The stdio server answers a plain tools/call itself once the session is
// initialized; a call with a _meta the SDK has not accepted goes to the
// SDK, and the same _meta is taken from then on; the answers are the
// same.
func TestFastCallTaken(t *testing.T) {
	m := New(nil, "not governed", Options{Version: "test"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- m.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	r := bufio.NewReader(outR)
	ask := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, `"id"`) {
			return ""
		}
		ans, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(ans)
	}
	call := func(id, meta string) string {
		if meta != "" {
			meta = `"_meta":` + meta + `,`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `"name":"read_file","arguments":{"path":"a"}}}`
	}
	// Before initialize, the SDK refuses the call.
	if a := ask(call("1", "")); !strings.Contains(a, `"error"`) || m.fastCalls.Load() != 0 {
		t.Fatalf("before initialize: %s, %d taken", a, m.fastCalls.Load())
	}
	ask(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	ask(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	want := ask(call("3", `{"m":1}`))
	if !strings.Contains(want, "not governed") || m.fastCalls.Load() != 0 {
		t.Fatalf("call with a new _meta: %s, %d taken", want, m.fastCalls.Load())
	}
	for i, c := range []struct{ id, meta string }{{"4", ""}, {"5", `{"m":1}`}} {
		if a := ask(call(c.id, c.meta)); a != strings.Replace(want, `"id":3`, `"id":`+c.id, 1) || m.fastCalls.Load() != uint64(i+1) {
			t.Fatalf("call %s: %s, %d taken; want %s", c.id, a, m.fastCalls.Load(), want)
		}
	}
	// A tool that may run long goes to the SDK, where a client can cancel
	// it: answered, not taken.
	cmd := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"execute_command","arguments":{"command":"true"}}}`
	if a := ask(cmd); !strings.Contains(a, `"id":6`) || m.fastCalls.Load() != 2 {
		t.Fatalf("execute_command: %s, %d taken; want 2 (the read_file calls only)", a, m.fastCalls.Load())
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
