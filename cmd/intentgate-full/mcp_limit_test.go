package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A client that sends a message without end (no newline) cannot make
// `intentgate mcp` buffer it: past the limit the server answers what came
// before, tells the client the limit in a JSON-RPC error, says the same on
// stderr, stops reading and exits with status 1.
func TestMCPMessageTooLarge(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/app.txt": "package app\n"})
	for _, tc := range []struct {
		name  string
		args  []string
		limit int
	}{
		{"default", nil, 16 << 20},
		{"flag", []string{"--max-message-size", "1048576"}, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(e2eBinary(t), append([]string{"mcp", "--workspace", ws}, tc.args...)...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan []string, 1)
			go func() {
				var got []string
				sc := bufio.NewScanner(stdout)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					got = append(got, sc.Text())
				}
				lines <- got
			}()
			head := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"select_active_intent","arguments":{"intent_id":"INT-001"}}}` + "\n" +
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_to_file","arguments":{"path":"src/app.txt","line_count":1,"content":"`
			if _, err := io.WriteString(stdin, head); err != nil {
				t.Fatal(err)
			}
			// Send up to 8 times the limit; the server must stop taking it
			// long before.
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			sent := 0
			for sent < 8*tc.limit {
				n, err := stdin.Write(chunk)
				sent += n
				if err != nil {
					if !errors.Is(err, io.ErrClosedPipe) && !strings.Contains(err.Error(), "broken pipe") {
						t.Fatalf("write: %v", err)
					}
					break
				}
			}
			stdin.Close()
			err = cmd.Wait()
			out := <-lines
			if sent >= 8*tc.limit {
				t.Errorf("the server took %d bytes of one message with a limit of %d", sent, tc.limit)
			}
			// What it took is the limit, its own read buffer and the
			// pipe's, nothing like the message.
			if sent > tc.limit+4<<20 {
				t.Errorf("the server took %d bytes before it stopped, limit %d", sent, tc.limit)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1", err)
			}
			want := "longer than " + strconv.Itoa(tc.limit) + " bytes"
			if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "--max-message-size") {
				t.Errorf("stderr %q, want %q and the flag that changes it", stderr.String(), want)
			}
			// The call before the long one was answered, then the error.
			answered := false
			for _, l := range out[:max(len(out)-1, 0)] {
				answered = answered || strings.Contains(l, `"id":2`) && strings.Contains(l, "INT-001")
			}
			if !answered {
				t.Errorf("select_active_intent, sent before the long message, was not answered: %q", out)
			}
			if len(out) == 0 {
				t.Fatal("nothing on stdout")
			}
			var resp struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Data    struct {
						Max int `json:"max_message_bytes"`
					} `json:"data"`
				} `json:"error"`
			}
			last := out[len(out)-1]
			if err := json.Unmarshal([]byte(last), &resp); err != nil {
				t.Fatalf("last line %q: %v", last, err)
			}
			if string(resp.ID) != "null" || resp.Error.Code != -32600 || resp.Error.Data.Max != tc.limit || !strings.Contains(resp.Error.Message, want) {
				t.Errorf("last line %q, want a JSON-RPC error (id null, code -32600) naming the limit %d", last, tc.limit)
			}
		})
	}
}

func TestMCPMaxMessageSizeChecked(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, nil)
	out, err := exec.Command(e2eBinary(t), "mcp", "--workspace", ws, "--max-message-size", "10").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--max-message-size 10") || !strings.Contains(string(out), "1024") {
		t.Errorf("--max-message-size 10: %v\n%s", err, out)
	}
}
