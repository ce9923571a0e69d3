package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
