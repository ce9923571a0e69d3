package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkHookClaudeCode answers one Claude Code PreToolUse event (a Write
// the session's intent allows) four ways:
//
//	process         `intentgate hook claude-code`, a process per event, doing the work itself
//	process+socket  the same process, handing the event to a running `intentgate serve`
//	http            Claude Code's http hook: a POST to `intentgate serve`, no process
//	node            a Node.js script that only reads the event's JSON and prints JSON
func BenchmarkHookClaudeCode(b *testing.B) {
	const session = "bench-session"
	ws := workspace(b, session)
	event, _ := json.Marshal(map[string]any{
		"session_id":      session,
		"cwd":             ws,
		"hook_event_name": "PreToolUse",
		"tool_name":       "Write",
		"tool_input":      map[string]any{"file_path": filepath.Join(ws, "src", "new.txt"), "content": "package app\n"},
		"tool_use_id":     "toolu_bench",
	})
	d := startDaemon(b, ws)

	spawn := func(b *testing.B, name string, args []string, env ...string) {
		cmd := func() *exec.Cmd {
			c := exec.Command(name, args...)
			c.Env = append(os.Environ(), env...)
			c.Stdin = bytes.NewReader(event)
			return c
		}
		out, err := cmd().CombinedOutput()
		if err != nil || strings.Contains(string(out), `"deny"`) {
			b.Fatalf("%s %v: %v %s", name, args, err, out)
		}
		for b.Loop() {
			if err := cmd().Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("process", func(b *testing.B) {
		spawn(b, intentgate(b), []string{"hook", "claude-code"}, "INTENTGATE_NO_DAEMON=1")
	})
	b.Run("process+socket", func(b *testing.B) {
		spawn(b, intentgate(b), []string{"hook", "claude-code"})
	})
	b.Run("http", func(b *testing.B) {
		// A connection per event, as a hook client that keeps none open.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		post := func() []byte {
			resp, err := client.Post(d.url, "application/json", bytes.NewReader(event))
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("%s: %s", resp.Status, body)
			}
			return body
		}
		if out := post(); len(out) != 0 {
			b.Fatalf("the daemon answered %s, want nothing (allowed)", out)
		}
		for b.Loop() {
			post()
		}
	})
	b.Run("node", func(b *testing.B) {
		node, dir := nodeModules(b, "")
		spawn(b, node, []string{filepath.Join(dir, "hook.mjs")})
	})
}
