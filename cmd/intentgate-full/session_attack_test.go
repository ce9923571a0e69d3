package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pending picture of the workspace a PreToolUse(Bash) event leaves for
// its PostToolUse lives where a command can write. Deleting or forging it no
// longer gives a warning and a free pass: the post event says the session is
// refused, and the session's next call is refused.
func TestPendingPictureTampering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, e *hookEnv)
	}{
		{"picture deleted", func(t *testing.T, e *hookEnv) {
			os.RemoveAll(e.path(".orchestration/sessions/snapshots"))
		}},
		{"picture forged", func(t *testing.T, e *hookEnv) {
			dir := e.path(".orchestration/sessions/snapshots")
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 1 {
				t.Fatalf("snapshots: %v %v", entries, err)
			}
			// An empty picture: as if secret.txt had always been there.
			if err := os.WriteFile(filepath.Join(dir, entries[0].Name()), []byte(`{"files":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"session file rewritten", func(t *testing.T, e *hookEnv) {
			dir := e.path(".orchestration/sessions")
			entries, _ := os.ReadDir(dir)
			n := 0
			for _, en := range entries {
				if strings.HasSuffix(en.Name(), ".json") {
					p := filepath.Join(dir, en.Name())
					b, _ := os.ReadFile(p)
					body, _, _ := strings.Cut(string(b), "\nhmac-sha256:")
					// Drop the pending state and the MAC line.
					os.WriteFile(p, []byte(strings.Replace(body, `"snapshots"`, `"x"`, 1)+"\n"), 0o644)
					n++
				}
			}
			if n == 0 {
				t.Fatal("no session file")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHookEnv(t, "claude-code", map[string]string{"README.md": "a\n"})
			e.intentUse(claudeSession, "INT-001")
			// Allowed, rewritten to run confined under intentgate exec.
			claudeRewritten(t, e, e.send("PreToolUse-Bash", nil))
			e.write("secret.txt", "out of scope\n")
			tc.tamper(t, e)
			out := e.send("PostToolUse-Bash", nil)
			if !strings.Contains(out.stdout+out.stderr, "SESSION_REFUSED") {
				t.Fatalf("PostToolUse-Bash after the tampering: stdout %q stderr %q, want SESSION_REFUSED", out.stdout, out.stderr)
			}
			// The next call of the session is refused.
			d := claudeDeny(t, e.send("PreToolUse-Write", nil))
			if !strings.Contains(d.Message+d.Code, "refused") && d.Code != "HOOK_ERROR" {
				t.Errorf("the next write: %+v, want the session refused", d)
			}
		})
	}
}

// A nested .orchestration is a governance path at every depth: an agent
// whose scope is everything still cannot plant intents in one.
func TestNestedOrchestrationProtected(t *testing.T) {
	ws := e2eWorkspace(t, `active_intents:
  - id: INT-ALL
    name: everything
    status: IN_PROGRESS
    owned_scope: ["**"]
`, nil)
	s := startDispatch(t, ws, "nested")
	if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-ALL"}); !r.OK {
		t.Fatalf("select: %+v", r)
	}
	for _, p := range []string{"src/x/.orchestration/active_intents.yaml", "src/.orchestration/agent_trace.jsonl"} {
		r := s.call("write_to_file", map[string]any{"path": p, "content": "active_intents: []\n"})
		if r.OK || r.code() != "PROTECTED_PATH" {
			t.Errorf("write %s: %+v, want PROTECTED_PATH", p, r)
		}
		if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(p))); !os.IsNotExist(err) {
			t.Errorf("%s exists after the refused write", p)
		}
	}
}

// A command that widens its own intent's scope and writes outside it in the
// same breath: both writes are refused inside the command (the intents file
// is read-only to it, outside.txt lies beyond the scope's roots), the
// intents stay as they were, and the next out-of-scope write is refused.
// Where confinement is off by the team's choice, the command would be
// judged by the scope in force before it ran (hooks.CommandAudit).
func TestCommandJudgedByRulesBefore(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, nil)
	intentsPath := filepath.Join(ws, ".orchestration", "active_intents.yaml")
	before, err := os.ReadFile(intentsPath)
	if err != nil {
		t.Fatal(err)
	}
	widened := strings.Replace(e2eIntents, `owned_scope: ["src/**"]`, `owned_scope: ["**"]`, 1)
	s := startDispatch(t, ws, "widen")
	if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}); !r.OK {
		t.Fatalf("select: %+v", r)
	}
	cmd := "printf '%s' '" + widened + "' > .orchestration/active_intents.yaml; echo x > outside.txt"
	r := s.call("execute_command", map[string]any{"command": cmd})
	if !strings.Contains(r.Output, "active_intents.yaml") || !strings.Contains(r.Output, "outside.txt") {
		t.Errorf("the command's output does not show both refused writes:\n%s", r.Output)
	}
	if after, _ := os.ReadFile(intentsPath); string(after) != string(before) {
		t.Errorf("the command changed active_intents.yaml:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(ws, "outside.txt")); !os.IsNotExist(err) {
		t.Errorf("outside.txt exists after the command (err %v)", err)
	}
	if r := s.call("write_to_file", map[string]any{"path": "outside2.txt", "content": "x\n"}); r.OK || r.code() != "SCOPE_VIOLATION" {
		t.Errorf("out-of-scope write after the command: %+v, want SCOPE_VIOLATION", r)
	}
}
