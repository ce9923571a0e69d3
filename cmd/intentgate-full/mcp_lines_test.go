package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// mcpPipe runs the built `intentgate mcp` on a fresh workspace: it sends an
// initialize request for protocol version, waits for its answer, sends
// lines and closes stdin, and returns the lines written after the
// initialize answer, the exit status and stderr.
func mcpPipe(t *testing.T, version string, lines ...string) (out []string, status int, stderr string) {
	t.Helper()
	ws := e2eWorkspace(t, mcpIntents, nil)
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
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}`+"\n", version)
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('\n')
	if err != nil || !strings.Contains(first, `"id":1,"result"`) {
		t.Fatalf("initialize answer %q: %v\n%s", first, err, errb.String())
	}
	for _, l := range append([]string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`}, lines...) {
		in.Write([]byte(l + "\n")) // the server may have ended: the status says
	}
	in.Close()
	for {
		l, err := r.ReadString('\n')
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		status = ee.ExitCode()
	}
	return out, status, errb.String()
}

// TestMCPStdioLines: the server reads one JSON-RPC message per line and
// decodes it once, doing what the MCP SDK's own stdio connection does with
// every kind of line: a batch is answered with one array (protocol
// versions before 2025-06-18), in the order of its requests, notifications
// left unanswered; a batch under 2025-06-18, an empty batch, a batch with
// one id twice, two messages on one line, a line that is not JSON and a
// message that is not JSON-RPC 2.0 end the connection with the SDK's
// error; blank lines and CRLF endings are whitespace.
func TestMCPStdioLines(t *testing.T) {
	t.Parallel()
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	t.Run("batch", func(t *testing.T) {
		t.Parallel()
		out, status, stderr := mcpPipe(t, "2025-03-26",
			`[`+ping("2")+`,{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":"x","method":"tools/list"}]`,
			ping("5"))
		if status != 0 || len(out) != 2 {
			t.Fatalf("status %d, stdout %q, stderr %s", status, out, stderr)
		}
		// The answers come as they are ready: the batch's when its last
		// request is answered.
		arr, single := out[0], out[1]
		if strings.HasPrefix(single, "[") {
			arr, single = single, arr
		}
		var batch []struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(arr), &batch); err != nil || len(batch) != 2 {
			t.Fatalf("answer to the batch %q: %v", arr, err)
		}
		if string(batch[0].ID) != "2" || string(batch[1].ID) != `"x"` || !bytes.Contains(batch[1].Result, []byte(`"write_to_file"`)) {
			t.Fatalf("answer to the batch %q: want ping 2, then tools/list x", arr)
		}
		if single != `{"jsonrpc":"2.0","id":5,"result":{}}` {
			t.Fatalf("answer after the batch %q", single)
		}
	})
	t.Run("whitespace", func(t *testing.T) {
		t.Parallel()
		out, status, stderr := mcpPipe(t, "2025-06-18", "", "   \t", ping("5")+"\r", " "+ping("6")+" ")
		if status != 0 || strings.Join(out, "\n") != `{"jsonrpc":"2.0","id":5,"result":{}}`+"\n"+`{"jsonrpc":"2.0","id":6,"result":{}}` {
			t.Fatalf("status %d, stdout %q, stderr %s", status, out, stderr)
		}
	})
	for _, c := range []struct {
		name, version, line, err string
	}{
		{"batch-2025-06-18", "2025-06-18", `[` + ping("2") + `]`, "JSON-RPC batching is not supported in 2025-06-18 and later"},
		{"empty-batch", "2025-03-26", `[]`, "empty batch"},
		{"duplicate-id", "2025-03-26", `[` + ping("2") + `,` + ping("2") + `]`, "duplicate message ID"},
		{"two-messages", "2025-06-18", ping("7") + ping("8"), "invalid trailing data"},
		{"not-json", "2025-06-18", `{not json`, "unmarshaling jsonrpc message"},
		{"not-2.0", "2025-06-18", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, "invalid message version tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, status, stderr := mcpPipe(t, c.version, c.line, ping("5"))
			if status != 1 || len(out) != 0 || !strings.Contains(stderr, c.err) {
				t.Fatalf("status %d, stdout %q, stderr %q; want status 1, no answer, %q", status, out, stderr, c.err)
			}
		})
	}
}
