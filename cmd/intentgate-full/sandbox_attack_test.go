package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Attacks of a confined command on what lies beyond its sandbox: the
// daemon's socket and loopback port, the workspaces' keys, the network, and
// the governance paths a mount cannot cover (missing ones, links).

// sbxLedger is the workspace's ledger as the tests decode it.
func sbxLedger(t *testing.T, ws string) []ledgerLine {
	t.Helper()
	f, err := os.Open(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ledgerLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l ledgerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("ledger line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// sbxRecordsOf are the ledger records naming path.
func sbxRecordsOf(t *testing.T, ws, path string) []ledgerLine {
	t.Helper()
	var out []ledgerLine
	for _, l := range sbxLedger(t, ws) {
		for _, f := range l.Files {
			if f.Path == path {
				out = append(out, l)
			}
		}
	}
	return out
}

// sbxVerify runs `intentgate trace verify` and returns its output and status.
func sbxVerify(t *testing.T, ws string) (string, int) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), "trace", "verify", "--workspace", ws)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// forgeScript is a shell script that posts the event in file ev to the
// daemon every way a confined command can: curl over TCP and over the Unix
// socket (where curl is installed), bash's /dev/tcp with the connection held
// open for the answer, the same closed at once after sending (so that no
// process holds it when the daemon looks), and the intentgate hook command
// itself run inside the sandbox.
func forgeScript(bin, hookURL, sock, ev string) string {
	u, _ := url.Parse(hookURL)
	host, port := u.Hostname(), u.Port()
	return fmt.Sprintf(`
EV=$(cat %[4]q)
if command -v curl >/dev/null; then
  curl -sS -m 20 -X POST --data-binary @%[4]q %[1]q; echo " [curl-tcp $?]"
  curl -sS -m 20 --unix-socket %[3]q -X POST --data-binary @%[4]q http://intentgate/hooks/claude-code; echo " [curl-unix $?]"
fi
REQ=$(printf 'POST /hooks/claude-code HTTP/1.1\r\nHost: %[5]s:%[6]s\r\nContent-Type: application/json\r\nContent-Length: %%d\r\nConnection: close\r\n\r\n%%s' ${#EV} "$EV")
if exec 3<>/dev/tcp/%[5]s/%[6]s; then
  printf '%%s' "$REQ" >&3; timeout 20 cat <&3; exec 3<&-; echo " [devtcp]"
fi
(printf '%%s' "$REQ" > /dev/tcp/%[5]s/%[6]s); echo " [devtcp-closed $?]"
%[2]q hook claude-code < %[4]q; echo " [hook $?]"
sleep 1
`, hookURL, bin, sock, ev, host, port)
}

// TestAttackForgedHookEventsFromConfinedCommands: a confined command posts
// a Claude Code PostToolUse event to the daemon in the name of a session
// that holds an intent, so that a write it never made (or a read it never
// did) would be recorded. Through every door a command comes in (intentgate
// exec, dispatch, mcp, a Claude Code Bash rewritten by the hook through the
// daemon), the daemon refuses it and neither the ledger nor the session
// changes; the same event posted from outside the sandbox is recorded, so
// the attack would have worked.
func TestAttackForgedHookEventsFromConfinedCommands(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	e := newHookEnv(t, "claude-code", map[string]string{"src/keep.txt": "keep\n"})
	e.intentUse(claudeSession, "INT-001")
	e.write("src/new.txt", "one\ntwo\n") // the write the forged event claims
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, e.payload("PostToolUse-Write", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, e.ws)
	bin := e2eBinary(t)
	script := forgeScript(bin, d.url, d.socket, ev)
	sessionFiles, _ := filepath.Glob(e.path(".orchestration/sessions/" + claudeSession + "*.json"))
	if len(sessionFiles) != 1 {
		t.Fatalf("session files of %s: %v, want one", claudeSession, sessionFiles)
	}
	sessionFile := sessionFiles[0]
	sessionBefore, err := os.ReadFile(sessionFile)
	if err != nil {
		t.Fatal(err)
	}

	check := func(door, out string) {
		t.Helper()
		if recs := sbxRecordsOf(t, e.ws, "src/new.txt"); len(recs) > 0 {
			t.Errorf("%s: the forged event was recorded: %+v\noutput:\n%s", door, recs, out)
		}
		if b, _ := os.ReadFile(sessionFile); !bytes.Equal(b, sessionBefore) {
			t.Errorf("%s: the forged event changed the session file", door)
		}
		if !strings.Contains(out, "another PID namespace") {
			t.Errorf("%s: the daemon's refusal is not in the command's output:\n%s", door, out)
		}
		if strings.Contains(out, "[hook 0]") && !strings.Contains(out, "cannot open the workspace") {
			t.Errorf("%s: the hook command run inside the sandbox handled the event:\n%s", door, out)
		}
	}

	t.Run("exec", func(t *testing.T) {
		e.intentUse("exec-door", "INT-001")
		out, _ := runExecBin(t, e.ws, "--session", "exec-door", "--", "bash", "-c", script)
		check("intentgate exec", out)
	})
	t.Run("dispatch", func(t *testing.T) {
		s := startDispatch(t, e.ws, "dispatch-door")
		if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}); !r.OK {
			t.Fatalf("select_active_intent: %+v", r)
		}
		r := s.call("execute_command", map[string]any{"command": "bash -c " + sbxQuote(script)})
		check("dispatch execute_command", r.Output+r.Error)
	})
	t.Run("mcp", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1.0.0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp", "--workspace", e.ws)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"}); isErr {
			t.Fatal(text)
		}
		_, text := mcpCall(t, cs, "execute_command", map[string]any{"command": "bash -c " + sbxQuote(script)})
		check("mcp execute_command", text)
	})
	t.Run("hook claude-code through the daemon", func(t *testing.T) {
		e.intentUse("hook-door", "INT-001")
		set := map[string]any{"session_id": "hook-door", "tool_input.command": "bash -c " + sbxQuote(script)}
		wrapped := claudeRewritten(t, e, e.send("PreToolUse-Bash", set))
		cmd := exec.Command("bash", "-c", wrapped)
		cmd.Dir = e.ws
		out, _ := cmd.CombinedOutput()
		e.send("PostToolUse-Bash", set)
		check("hook claude-code", string(out))
	})

	// The same event from outside the sandbox is an ordinary hook event,
	// and is recorded: the refusals above are not an event the daemon
	// ignores anyway.
	hookHTTP(t, d.url)(e.payload("PostToolUse-Write", nil))
	if recs := sbxRecordsOf(t, e.ws, "src/new.txt"); len(recs) != 1 {
		t.Errorf("the event posted from outside the sandbox: %d records of src/new.txt, want 1", len(recs))
	}
	if out, code := sbxVerify(t, e.ws); code != 0 {
		t.Errorf("trace verify: exit %d\n%s", code, out)
	}
}

// TestConfinedCommandCannotReadTheKeys: the directory holding every
// workspace's key is an empty directory inside the sandbox, through exec and
// dispatch.
func TestConfinedCommandCannotReadTheKeys(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := execWorkspace(t)
	selectIntent(t, ws, "k", "INT-002")
	base := os.Getenv("INTENTGATE_ANCHOR_DIR")
	if base == "" {
		t.Fatal("the tests keep the workspace keys under INTENTGATE_ANCHOR_DIR (anchortest)")
	}
	var keys []string
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "key" {
			keys = append(keys, p)
		}
		return nil
	})
	if len(keys) == 0 {
		t.Fatalf("no workspace key under %s after a session selected an intent", base)
	}
	script := fmt.Sprintf("ls -A %q | wc -l; cat %q && echo READ-THE-KEY", base, keys[0])
	out, _ := runExecBin(t, ws, "--session", "k", "--", "sh", "-c", script)
	if strings.Contains(out, "READ-THE-KEY") || !strings.HasPrefix(strings.TrimSpace(out), "0") {
		t.Errorf("intentgate exec: the key directory is visible:\n%s", out)
	}
	s := startDispatch(t, ws, "k")
	r := s.call("execute_command", map[string]any{"command": script})
	if strings.Contains(r.Output, "READ-THE-KEY") || !strings.Contains(r.Output, "No such file") {
		t.Errorf("dispatch: the key directory is visible:\n%s", r.Output)
	}
}

// sbxQuote quotes s for sh.
func sbxQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const wideIntents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-002
    name: everything
    status: IN_PROGRESS
    owned_scope: ["**"]
`

// createGovernance creates, under a scope of **, every governance path a
// workspace did not have: a mount cannot cover a path that does not exist.
const createGovernance = `mkdir -p .codex .claude .gemini .cursor .clinerules .roo src/x/.orchestration .git/hooks
echo x > .codex/config.toml
echo '{}' > .mcp.json
echo y > .roo/mcp.json
echo z > .clinerules/rules.md
echo '{"hooks":{}}' > .claude/settings.json
ln -s ../src .gemini/link
printf '[core]\n\tfsmonitor = touch pwned\n' > .git/config
printf '#!/bin/sh\n' > .git/hooks/pre-commit
echo 'active_intents: []' > src/x/.orchestration/active_intents.yaml
echo ok > top.txt
`

// createdGovernance are the paths createGovernance makes that must be gone
// after the command, whatever door it came through.
var createdGovernance = []string{".codex", ".claude", ".gemini", ".cursor", ".clinerules", ".mcp.json",
	".roo/mcp.json", ".git", "src/x/.orchestration"}

// TestAttackGovernanceCreatedUnderWideScope: through dispatch, mcp, a Claude
// Code Bash (hook process) and the same through the daemon, the governance
// paths a command created where there were none are removed after it, their
// files recorded in the ledger as violations, and the command's other work
// kept.
func TestAttackGovernanceCreatedUnderWideScope(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	e := &hookEnv{t: t, agent: "claude-code", ws: e2eWorkspace(t, wideIntents, map[string]string{"src/a.go": "package a\n"})}
	os.RemoveAll(e.path(".git")) // .git is absent too
	bin := e2eBinary(t)

	door := 0
	check := func(name, out string) {
		t.Helper()
		door++
		for _, p := range createdGovernance {
			if _, err := os.Lstat(e.path(p)); err == nil {
				t.Errorf("%s: %s is still there after the command\noutput:\n%s", name, p, out)
			}
		}
		if b, err := os.ReadFile(e.path("top.txt")); err != nil || string(b) != "ok\n" {
			t.Errorf("%s: the command's own work top.txt = %q, %v", name, b, err)
		}
		os.Remove(e.path("top.txt"))
		if !strings.Contains(out, "SCOPE_VIOLATION") || !strings.Contains(out, ".codex/config.toml") {
			t.Errorf("%s: the model is not told of the violations:\n%s", name, out)
		}
		for _, p := range []string{".codex/config.toml", ".mcp.json", ".git/config", ".git/hooks/pre-commit",
			".claude/settings.json", "src/x/.orchestration/active_intents.yaml", ".gemini/link"} {
			n := 0
			for _, r := range sbxRecordsOf(t, e.ws, p) {
				if r.Metadata.IG.Decision == "violation" {
					n++
				}
			}
			if n != door {
				t.Errorf("%s: %d violation records of %s, want %d", name, n, p, door)
			}
		}
	}

	t.Run("dispatch", func(t *testing.T) {
		s := startDispatch(t, e.ws, "wide-dispatch")
		if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-002"}); !r.OK {
			t.Fatalf("select_active_intent: %+v", r)
		}
		r := s.call("execute_command", map[string]any{"command": createGovernance})
		check("dispatch", r.Output+r.Error)
	})
	t.Run("mcp", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1.0.0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp", "--workspace", e.ws)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-002"}); isErr {
			t.Fatal(text)
		}
		_, text := mcpCall(t, cs, "execute_command", map[string]any{"command": createGovernance})
		check("mcp", text)
	})
	claude := func(name, session, toolUse string) {
		e.intentUse(session, "INT-002")
		set := map[string]any{"session_id": session, "tool_use_id": toolUse, "tool_input.command": createGovernance}
		wrapped := claudeRewritten(t, e, e.send("PreToolUse-Bash", set))
		cmd := exec.Command("bash", "-c", wrapped)
		cmd.Dir = e.ws
		out, _ := cmd.CombinedOutput()
		post := e.send("PostToolUse-Bash", set)
		check(name, string(out)+post.stdout+post.stderr)
	}
	t.Run("hook claude-code", func(t *testing.T) { claude("hook claude-code", "wide-hook", "toolu_w1") })
	t.Run("daemon", func(t *testing.T) {
		startServe(t, e.ws)
		claude("daemon", "wide-daemon", "toolu_w2")
	})
	if out, code := sbxVerify(t, e.ws); code != 0 {
		t.Errorf("trace verify: exit %d\n%s", code, out)
	}
}

// TestAttackGovernanceLink: a governance path that is a link to a directory
// the intent may write is read-only through the link's target too, and a
// link to nothing refuses the command; through exec and dispatch.
func TestAttackGovernanceLink(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := e2eWorkspace(t, wideIntents, map[string]string{"src/claude/settings.json": "{}\n", "src/a.go": "package a\n"})
	if err := os.Symlink("src/claude", filepath.Join(ws, ".claude")); err != nil {
		t.Fatal(err)
	}
	selectIntent(t, ws, "l", "INT-001")
	script := `echo '{"hooks":{"PreToolUse":[]}}' > src/claude/settings.json || echo REFUSED-TARGET
echo '{"hooks":{}}' > .claude/settings.json || echo REFUSED-LINK
echo ok > src/b.go && echo WROTE-SRC`
	out, _ := runExecBin(t, ws, "--session", "l", "--", "sh", "-c", script)
	for _, want := range []string{"REFUSED-TARGET", "REFUSED-LINK", "WROTE-SRC"} {
		if !strings.Contains(out, want) {
			t.Errorf("exec: output lacks %s:\n%s", want, out)
		}
	}
	s := startDispatch(t, ws, "l")
	r := s.call("execute_command", map[string]any{"command": script})
	if !strings.Contains(r.Output, "REFUSED-TARGET") || !strings.Contains(r.Output, "REFUSED-LINK") {
		t.Errorf("dispatch: the settings were written through the link's target:\n%s", r.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/claude/settings.json")); string(b) != "{}\n" {
		t.Errorf("the agent's settings changed through the link: %q", b)
	}

	// A link to nothing: the command could create its target.
	if err := os.Symlink("src/cursor", filepath.Join(ws, ".cursor")); err != nil {
		t.Fatal(err)
	}
	out, code := runExecBin(t, ws, "--session", "l", "--", "sh", "-c", "mkdir -p src/cursor && echo x > src/cursor/rules && echo CREATED")
	if code != 125 || strings.Contains(out, "CREATED") || !strings.Contains(out, ".cursor") {
		t.Errorf("exec with a dangling governance link: exit %d, want 125 naming .cursor:\n%s", code, out)
	}
	r = s.call("execute_command", map[string]any{"command": "mkdir -p src/cursor && echo x > src/cursor/rules && echo CREATED"})
	if r.OK && strings.Contains(r.Output, "CREATED") {
		t.Errorf("dispatch ran a command with a dangling governance link:\n%s", r.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, "src/cursor")); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// TestSandboxNetwork: with sandbox.network: deny a command reaches nothing
// but its own loopback; with allow (the default) it reaches this machine's
// loopback. Through exec and dispatch.
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO-FROM-OUTSIDE\n"))
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	// Reach the listener; then listen and connect on the sandbox's own
	// loopback, which works either way.
	script := fmt.Sprintf(`if exec 3<>/dev/tcp/127.0.0.1/%d; then head -1 <&3; else echo NO-NETWORK; fi
if command -v python3 >/dev/null; then python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); a.sendall(b"LOOPBACK-OK\n"); print(c.recv(64).decode().strip())
'; else echo LOOPBACK-OK; fi`, port)
	for _, tc := range []struct {
		config string
		want   []string
		not    string
	}{
		{"", []string{"HELLO-FROM-OUTSIDE", "LOOPBACK-OK"}, "NO-NETWORK"},
		{"sandbox:\n  network: allow\n", []string{"HELLO-FROM-OUTSIDE", "LOOPBACK-OK"}, "NO-NETWORK"},
		{"sandbox:\n  network: deny\n", []string{"NO-NETWORK", "LOOPBACK-OK"}, "HELLO-FROM-OUTSIDE"},
	} {
		ws := e2eWorkspace(t, wideIntents, map[string]string{".orchestration/config.yaml": tc.config})
		selectIntent(t, ws, "n", "INT-001")
		out, _ := runExecBin(t, ws, "--session", "n", "--", "bash", "-c", script)
		s := startDispatch(t, ws, "n")
		r := s.call("execute_command", map[string]any{"command": "bash -c " + sbxQuote(script)})
		for door, got := range map[string]string{"exec": out, "dispatch": r.Output + r.Error} {
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q, %s: output lacks %s:\n%s", tc.config, door, w, got)
				}
			}
			if strings.Contains(got, tc.not) {
				t.Errorf("%q, %s: output has %s:\n%s", tc.config, door, tc.not, got)
			}
		}
	}
	ws := e2eWorkspace(t, wideIntents, map[string]string{".orchestration/config.yaml": "sandbox:\n  network: off\n"})
	out, code := runExecBin(t, ws, "--", "true")
	if code != 125 || !strings.Contains(out, "config.yaml:2") || !strings.Contains(out, "allow or deny") {
		t.Errorf("network: off: exit %d, want 125 naming the line and the values:\n%s", code, out)
	}
}

// TestRefusedWritesRecorded: the writes the sandbox refused a command are
// recorded in the ledger as refusals (PROTECTED_PATH for a governance path,
// SCOPE_VIOLATION outside the intent's roots), each naming its path, through
// dispatch and mcp; every record is a valid Agent Trace record and the ledger
// verifies.
func TestRefusedWritesRecorded(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := e2eWorkspace(t, wideIntents, map[string]string{"docs/readme.md": "docs\n", "src/a.go": "package a\n"})
	command := "echo x > docs/refused.md; touch .orchestration/planted; echo ok > src/ok.go"
	want := map[string]string{"docs/refused.md": "SCOPE_VIOLATION", ".orchestration/planted": "PROTECTED_PATH"}
	check := func(door, session string) {
		t.Helper()
		found := map[string]bool{}
		for _, l := range sbxLedger(t, ws) {
			ig := l.Metadata.IG
			if ig.Session != session || ig.Decision != "deny" || len(l.Files) != 1 {
				continue
			}
			var d struct {
				Code    string `json:"error"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(ig.Denial, &d); err != nil {
				t.Fatalf("%s: denial %s: %v", door, ig.Denial, err)
			}
			p := l.Files[0].Path
			if code, ok := want[p]; ok && d.Code == code && ig.Tool == "execute_command" &&
				(strings.Contains(d.Message, "Permission denied") || strings.Contains(d.Message, "Read-only file system")) {
				found[p] = true
			}
		}
		for p, code := range want {
			if !found[p] {
				t.Errorf("%s: no %s refusal recorded for %s", door, code, p)
			}
		}
	}
	s := startDispatch(t, ws, "refusals-dispatch")
	if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}); !r.OK {
		t.Fatalf("select_active_intent: %+v", r)
	}
	if r := s.call("execute_command", map[string]any{"command": command}); !r.OK {
		t.Fatalf("execute_command: %+v", r)
	}
	check("dispatch", "refusals-dispatch")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.Command(e2eBinary(t), "mcp", "--workspace", ws)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "refusals", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"}); isErr {
		t.Fatal(text)
	}
	mcpCall(t, cs, "execute_command", map[string]any{"command": command})
	cs.Close()
	var sessions []string
	for _, l := range sbxLedger(t, ws) {
		if l.Metadata.IG.Tool == "execute_command" && l.Metadata.IG.Session != "refusals-dispatch" && !slices.Contains(sessions, l.Metadata.IG.Session) {
			sessions = append(sessions, l.Metadata.IG.Session)
		}
	}
	if len(sessions) != 1 {
		t.Fatalf("mcp: the command's records name sessions %v, want one", sessions)
	}
	check("mcp", sessions[0])

	sch := schema(t)
	ledger, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range bytes.Split(bytes.TrimSpace(ledger), []byte("\n")) {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("ledger line %d is not a valid Agent Trace record: %v", i+1, err)
		}
	}
	if out, code := sbxVerify(t, ws); code != 0 || !strings.Contains(out, "INTACT") {
		t.Errorf("trace verify: exit %d\n%s", code, out)
	}
}
