package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mcpAsker runs the built `intentgate mcp` on ws and returns a function
// that sends one line and returns the answer line; the process ends with
// the test.
func mcpAsker(t *testing.T, ws string) func(line string) string {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), "mcp", "--workspace", ws)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			t.Errorf("intentgate mcp: %v\n%s", err, errb.String())
		}
	})
	r := bufio.NewReader(stdout)
	return func(line string) string {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"id"`) {
			ans, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("no answer to %s: %v\n%s", line, err, errb.String())
			}
			return strings.TrimSuffix(ans, "\n")
		}
		return ""
	}
}

// withID replaces the id of an answer line (the ids of the calls compared
// differ, nothing else may).
func withID(answer, from, to string) string {
	return strings.Replace(answer, `"id":`+from+`,`, `"id":`+to+`,`, 1)
}

// TestMCPFastCallAnswersAsSDK: the stdio server answers the plainest
// tools/call requests itself, the others through the MCP SDK; a user sees
// no difference. The same call is made both ways on one connection (a
// _meta the SDK has not accepted yet, an escaped tool name, extra members
// send a call to the SDK; no _meta, or one the SDK accepted, to the
// server's own path) and the answers, a file's content, a refusal, a
// write, must be equal byte for byte but for the id. Under the multi
// round trip protocol (2026-07-28, a _meta on every request, no
// initialize) the answers carry the SDK's resultType on both paths.
func TestMCPFastCallAnswersAsSDK(t *testing.T) {
	t.Parallel()
	call := func(id, name, args, meta string) string {
		params := `"name":"` + name + `","arguments":` + args
		if meta != "" {
			params = `"_meta":` + meta + `,` + params
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params + `}}`
	}
	same := func(t *testing.T, a, b, idA, idB string) {
		t.Helper()
		if withID(a, idA, idB) != b {
			t.Fatalf("answers differ:\n%s\n%s", a, b)
		}
	}
	t.Run("2025-06-18", func(t *testing.T) {
		t.Parallel()
		ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/a.txt": "alpha\nbeta\n"})
		ask := mcpAsker(t, ws)
		init := ask(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fast","version":"0"}}}`)
		if !strings.Contains(init, `"result"`) {
			t.Fatalf("initialize: %s", init)
		}
		ask(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		sel := ask(call("1", "select_active_intent", `{"intent_id":"INT-001"}`, `{"trace":"t1"}`))
		if !strings.Contains(sel, `"result"`) || strings.Contains(sel, `"isError":true`) {
			t.Fatalf("select: %s", sel)
		}
		read := `{"path":"src/a.txt"}`
		viaSDK := ask(call("2", "read_file", read, `{"trace":"t2"}`))
		if !strings.Contains(viaSDK, `alpha`) || strings.Contains(viaSDK, `resultType`) {
			t.Fatalf("read_file: %s", viaSDK)
		}
		same(t, viaSDK, ask(call("3", "read_file", read, "")), "2", "3")
		same(t, viaSDK, ask(call(`"x-4"`, "read_file", read, `{"trace":"t1"}`)), "2", `"x-4"`)
		same(t, viaSDK, ask(call("5", `read\u005ffile`, read, "")), "2", "5")
		same(t, viaSDK, ask(strings.Replace(call("6", "read_file", read, ""), `"params"`, `"extra":1,"params"`, 1)), "2", "6")
		// A refusal (outside the intent's scope).
		out := `{"path":"docs/x.md","content":"x\n","line_count":1}`
		deniedSDK := ask(call("7", "write_to_file", out, `{"trace":"t3"}`))
		if !strings.Contains(deniedSDK, `SCOPE_VIOLATION`) || !strings.Contains(deniedSDK, `"isError":true`) {
			t.Fatalf("write outside the scope: %s", deniedSDK)
		}
		same(t, deniedSDK, ask(call("8", "write_to_file", out, "")), "7", "8")
		// Writes, then the file's content read both ways.
		w := ask(call("9", "write_to_file", `{"path":"src/b.txt","content":"one <&> two\n","line_count":1}`, ""))
		if !strings.Contains(w, "successfully") || strings.Contains(w, `"isError":true`) {
			t.Fatalf("write: %s", w)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "src", "b.txt")); err != nil || string(b) != "one <&> two\n" {
			t.Fatalf("src/b.txt: %q, %v", b, err)
		}
		readB := `{"path":"src/b.txt"}`
		same(t, ask(call("10", "read_file", readB, `{"trace":"t4"}`)), ask(call("11", "read_file", readB, "")), "10", "11")
		// An unknown tool is the SDK's protocol error.
		if a := ask(call("12", "no_such_tool", `{}`, "")); !strings.Contains(a, `"error":{"code":-32602`) {
			t.Fatalf("unknown tool: %s", a)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/a.txt": "alpha\n"})
		ask := mcpAsker(t, ws)
		meta := `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fast","version":"0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
		// The same _meta with its members in another order: bytes the SDK
		// has not accepted yet.
		meta2 := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fast","version":"0"}}`
		sel := ask(call("1", "select_active_intent", `{"intent_id":"INT-001"}`, meta))
		if !strings.Contains(sel, `"resultType":"complete"`) || strings.Contains(sel, `"isError":true`) {
			t.Fatalf("select: %s", sel)
		}
		read := `{"path":"src/a.txt"}`
		viaSDK := ask(call("2", "read_file", read, meta2))
		if !strings.Contains(viaSDK, `alpha`) || !strings.Contains(viaSDK, `"resultType":"complete"`) {
			t.Fatalf("read_file: %s", viaSDK)
		}
		same(t, viaSDK, ask(call("3", "read_file", read, meta)), "2", "3")
		same(t, viaSDK, ask(call("4", "read_file", read, meta2)), "2", "4")
		// A _meta the SDK refuses (an unsupported version) is never
		// taken: the SDK answers it, each time.
		bad := `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2099-01-01"}`
		for _, id := range []string{"5", "6"} {
			if a := ask(call(id, "read_file", read, bad)); !strings.Contains(a, `"error"`) || strings.Contains(a, "alpha") {
				t.Fatalf("unsupported version: %s", a)
			}
		}
	})
}
