package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/fakemodel"
)

// TestClaudeCodeEndToEnd runs the real Claude Code binary against a scripted
// model (internal/fakemodel) in a workspace where `intentgate install
// claude-code` put its hooks and turned on Claude Code's sandbox: an
// out-of-scope Write is denied, an Edit after a Read is traced with its
// ranges, and Bash commands, rewritten to run under `intentgate exec`, fail
// inside the sandbox when they write outside the scope or to
// .orchestration/active_intents.yaml, the model seeing the error. The
// "daemon" case does the same with `install --daemon` and `intentgate serve`,
// whose socket the command hooks use.
//
// Claude Code's own sandbox needs bubblewrap and socat on Linux.
//
// It downloads Claude Code from npm (over 200 MB), so it runs only with
// INTENTGATE_E2E_CLAUDE=1. INTENTGATE_CLAUDE_BIN may name an installed claude
// binary to use instead; INTENTGATE_SHARED the shared/ directory.
func TestClaudeCodeEndToEnd(t *testing.T) {
	t.Parallel()
	if os.Getenv("INTENTGATE_E2E_CLAUDE") != "1" {
		t.Skip("set INTENTGATE_E2E_CLAUDE=1 to run Claude Code end to end (it installs @anthropic-ai/claude-code from npm)")
	}
	tools := t.TempDir()
	claude := claudeBinary(t, tools)
	bin := e2eBinary(t)

	for _, daemon := range []bool{false, true} {
		name := "command-hooks"
		if daemon {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) { claudeScenario(t, bin, claude, daemon) })
	}
}

// claudeBinary installs Claude Code from npm into dir, unless
// INTENTGATE_CLAUDE_BIN names one.
func claudeBinary(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("INTENTGATE_CLAUDE_BIN"); bin != "" {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("INTENTGATE_E2E_CLAUDE=1 needs npm: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "@anthropic-ai/claude-code@2.1.331") // pinned: the version the test was last run against
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install @anthropic-ai/claude-code: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("claude --version: %v\n%s", err, out)
	}
	t.Logf("Claude Code %s", bytes.TrimSpace(out))
	return bin
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func claudeScenario(t *testing.T, bin, claude string, daemon bool) {
	ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/app.txt": "line1\nbeta\nline3\n"})
	if ws2, err := filepath.EvalSymlinks(ws); err == nil {
		ws = ws2 // the paths Claude Code reports are real ones
	}
	args := []string{"install", "claude-code", "-w", ws, "--command", captureWrapper(t, bin)}
	if daemon {
		args = append(args, "--daemon="+freeLoopbackAddr(t))
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	var d *serveProc
	if daemon {
		d = startServe(t, ws)
	}
	intentsBefore, _ := os.ReadFile(filepath.Join(ws, ".orchestration", "active_intents.yaml"))

	abs := func(rel string) string { return filepath.Join(ws, filepath.FromSlash(rel)) }
	srv, err := fakemodel.Start([]fakemodel.Step{
		{Tool: "Write", Input: map[string]any{"file_path": abs("docs/out.md"), "content": "no\n"}},
		{Tool: "Read", Input: map[string]any{"file_path": abs("src/app.txt")}},
		{Tool: "Edit", Input: map[string]any{"file_path": abs("src/app.txt"), "old_string": "beta", "new_string": "BETA\nextra"}},
		{Tool: "Bash", Input: map[string]any{"command": "echo hi > " + abs("outside.txt"), "description": "write outside the scope"}},
		{Tool: "Bash", Input: map[string]any{"command": "echo '  - id: INT-666' >> " + abs(".orchestration/active_intents.yaml"), "description": "widen the intents"}},
		{Tool: "Bash", Input: map[string]any{"command": "echo ok > " + abs("src/bash.txt"), "description": "write in scope"}},
		{Text: "All done."},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "work on @INT-001", "--permission-mode", "acceptEdits",
		"--allowedTools", "Read", "Edit", "Write", "Bash(echo:*)", "--output-format", "json")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-dummy",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "HOME="+t.TempDir(), "CLAUDE_PROJECT_DIR=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}

	// What the model was told, from the requests Claude Code sent it.
	results, _ := claudeRequests(srv.Requests())
	for _, r := range results {
		if strings.Contains(r.text, "Exit code") {
			t.Logf("Bash result: %s", r.text)
		}
	}
	denied := false
	for _, r := range results {
		if r.isError && strings.Contains(r.text, `"error":"SCOPE_VIOLATION"`) && strings.Contains(r.text, `"path":"docs/out.md"`) {
			denied = true
		}
	}
	if !denied {
		t.Errorf("no is_error tool result with the SCOPE_VIOLATION denial of docs/out.md; tool results: %+v", results)
	}
	// The Bash commands ran under intentgate exec: the writes outside the
	// scope and to the intents failed inside the command, and the model
	// saw the command's own error.
	refused := func(name string) bool {
		return slices.ContainsFunc(results, func(r claudeToolResult) bool {
			return strings.Contains(r.text, name) && (strings.Contains(r.text, "Permission denied") ||
				strings.Contains(r.text, "Read-only file system") || strings.Contains(r.text, "Operation not permitted"))
		})
	}
	if !refused("outside.txt") {
		t.Errorf("the model was not shown the refused write of outside.txt; tool results: %+v", results)
	}
	if !refused("active_intents.yaml") {
		t.Errorf("the model was not shown the refused write of active_intents.yaml; tool results: %+v", results)
	}
	if got, _ := os.ReadFile(abs(".orchestration/active_intents.yaml")); !bytes.Equal(got, intentsBefore) {
		t.Errorf("a Bash command changed active_intents.yaml:\n%s", got)
	}
	if _, err := os.Stat(abs("outside.txt")); err == nil {
		t.Errorf("a Bash command wrote outside.txt, outside the scope")
	}
	if b, _ := os.ReadFile(abs("src/bash.txt")); string(b) != "ok\n" {
		t.Errorf("the Bash command in scope did not write src/bash.txt (%q); tool results: %+v", b, results)
	}

	// What the ledger holds.
	if _, err := os.Stat(abs("docs/out.md")); !os.IsNotExist(err) {
		t.Errorf("docs/out.md exists: the denied Write happened")
	}
	e := &hookEnv{t: t, ws: ws}
	content, _ := os.ReadFile(abs("src/app.txt"))
	if string(content) != "line1\nBETA\nextra\nline3\n" {
		t.Errorf("src/app.txt = %q after the Edit", content)
	}
	var got []string
	for _, r := range e.ledger() {
		m := r.Metadata.IG
		c := ""
		if r.path() == "src/app.txt" {
			c = string(content)
		}
		got = append(got, fmt.Sprintf("%s %s %s %v", m.Decision, m.Mutation, r.path(), r.ranges(t, c)))
	}
	want := []string{
		"deny denial docs/out.md []",
		"allow modify src/app.txt [2-3]",
		"allow create src/bash.txt [1-1]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ledger:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d != nil {
		if n := strings.Count(d.stderr.String(), "via=socket"); n < 6 {
			t.Errorf("the daemon answered %d hook events through its socket, want every tool and prompt event:\n%s", n, d.stderr.String())
		}
	}
	if t.Failed() {
		t.Logf("claude stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// captureWrapper returns bin, or, when INTENTGATE_E2E_CAPTURE names a
// directory, a script that copies every hook payload there (one file per
// event, named by the time it came) before handing it to bin: how the
// payloads under testdata/captured/claude-code were taken.
func captureWrapper(t *testing.T, bin string) string {
	t.Helper()
	dir := os.Getenv("INTENTGATE_E2E_CAPTURE")
	if dir == "" {
		return bin
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "intentgate-capture")
	script := "#!/bin/sh\nif [ \"$1\" = hook ]; then\n  f=" + shellQuote(dir) + "/$(date +%s%N).json\n  cat > \"$f\"\n  exec " +
		shellQuote(bin) + " \"$@\" < \"$f\"\nfi\nexec " + shellQuote(bin) + " \"$@\"\n"
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type claudeToolResult struct {
	isError bool
	text    string
}

// claudeRequests reads the requests the fake model received ("METHOD PATH"
// then the body): the tool results and the texts Claude Code sent the model.
func claudeRequests(requests []string) (results []claudeToolResult, texts []string) {
	for _, r := range requests {
		_, body, _ := strings.Cut(r, "\n")
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal([]byte(body), &req) != nil {
			continue
		}
		for _, m := range req.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Text    string          `json:"text"`
				IsError bool            `json:"is_error"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					texts = append(texts, b.Text)
				case "tool_result":
					results = append(results, claudeToolResult{b.IsError, blockText(b.Content)})
				}
			}
		}
	}
	return results, texts
}

// blockText is a tool result's content: a string, or text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
