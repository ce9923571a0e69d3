package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontDoorsReportRejectedIntents: when active_intents.yaml is edited
// into something invalid during a session, `intentgate dispatch` and
// `intentgate mcp` keep the previous intents in force and say so on
// stderr, once per new problem, after the call that first saw it (the
// report reads what the call's own check of the intents found; it does
// not look at the file again). Once the file is valid again, a new bad
// edit is reported again.
func TestFrontDoorsReportRejectedIntents(t *testing.T) {
	t.Parallel()
	const warning = "the last edit of active_intents.yaml was rejected"
	doors := []struct {
		name  string
		args  []string
		calls func(n int) []string // select, then n writes
	}{
		{"dispatch", []string{"dispatch", "--agent", "a", "--model", "m/x"}, func(n int) []string {
			l := []string{`{"id":"s","session":"s1","tool":"select_active_intent","args":{"intent_id":"INT-001"}}`}
			for i := range n {
				l = append(l, `{"id":"w","session":"s1","tool":"write_to_file","args":{"path":"src/n`+string(rune('a'+i))+`.txt","content":"x\n","line_count":1}}`)
			}
			return l
		}},
		{"mcp", []string{"mcp"}, func(n int) []string {
			l := []string{
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"0"}}}`,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"select_active_intent","arguments":{"intent_id":"INT-001"}}}`,
			}
			for i := range n {
				l = append(l, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"write_to_file","arguments":{"path":"src/n`+string(rune('a'+i))+`.txt","content":"x\n","line_count":1}}}`)
			}
			return l
		}},
	}
	for _, door := range doors {
		t.Run(door.name, func(t *testing.T) {
			t.Parallel()
			ws := e2eWorkspace(t, mcpIntents, nil)
			intents := filepath.Join(ws, ".orchestration", "active_intents.yaml")
			cmd := exec.Command(e2eBinary(t), append(door.args, "--workspace", ws)...)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(stdout)
			send := func(line string) string {
				t.Helper()
				io.WriteString(in, line+"\n")
				ans, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("no answer to %s: %v\n%s", line, err, stderr.String())
				}
				return ans
			}
			write := func(path, body string) {
				t.Helper()
				// Through a rename, as an editor saves: a new inode, so no
				// stamp can mistake it for the file read before.
				tmp := path + ".new"
				if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			lines := door.calls(6)
			for _, l := range lines[:len(lines)-6] {
				send(l)
			}
			writes := lines[len(lines)-6:]
			send(writes[0])
			if strings.Contains(stderr.String(), warning) {
				t.Fatalf("warning before any bad edit:\n%s", stderr.String())
			}
			write(intents, "active_intents: [unclosed\n")
			for _, l := range writes[1:3] {
				if a := send(l); strings.Contains(a, "isError\":true") || strings.Contains(a, `"ok":false`) {
					t.Fatalf("write under the previous intents refused: %s", a)
				}
			}
			if n := strings.Count(stderr.String(), warning); n != 1 {
				t.Fatalf("%d warnings after two calls under a bad edit, want 1:\n%s", n, stderr.String())
			}
			write(intents, mcpIntents)
			send(writes[3])
			write(intents, "active_intents: {{\n")
			send(writes[4])
			send(writes[5])
			in.Close()
			io.Copy(io.Discard, r)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v\n%s", door.name, err, stderr.String())
			}
			if n := strings.Count(stderr.String(), warning); n != 2 {
				t.Fatalf("%d warnings, want 2 (one per bad edit):\n%s", n, stderr.String())
			}
		})
	}
}
