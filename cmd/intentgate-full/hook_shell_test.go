package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shells of the external agents whose hooks can rewrite a tool's input
// (Codex, Gemini CLI, Cline 3) run under `intentgate exec`, as Claude Code's
// Bash does; where an agent cannot (Cursor, the older Cline protocol), what a
// command changed is judged after it ran, and governance files it changed
// are restored.

// codexRewritten checks that an allowed Codex shell call was answered with
// a rewrite Codex accepts (its output schema), the command under intentgate
// exec, and returns that command.
func codexRewritten(t *testing.T, what string, out hookOut) string {
	t.Helper()
	m := codexValid(t, "PreToolUse", out)
	var a struct {
		HSO struct {
			Decision string                     `json:"permissionDecision"`
			Input    map[string]json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if m == nil || json.Unmarshal([]byte(out.stdout), &a) != nil || a.HSO.Decision != "allow" {
		t.Fatalf("%s: stdout %q, want an allow with updatedInput", what, out.stdout)
	}
	return execCommandOf(t, what, a.HSO.Input["command"])
}

// geminiRewritten checks that an allowed run_shell_command was answered
// with hookSpecificOutput.tool_input, the whole input with the command
// under intentgate exec, and returns that command.
func geminiRewritten(t *testing.T, what string, out hookOut) string {
	t.Helper()
	a := geminiDecode(t, out)
	if a.Decision != "" || a.HSO == nil || a.HSO.Event != "BeforeTool" || a.HSO.ToolInput == nil {
		t.Fatalf("%s: stdout %q, want hookSpecificOutput.tool_input", what, out.stdout)
	}
	if _, ok := a.HSO.ToolInput["description"]; !ok {
		t.Errorf("%s: tool_input lost the input's other fields: %s", what, out.stdout)
	}
	return execCommandOf(t, what, a.HSO.ToolInput["command"])
}

// cline3Rewritten checks that an allowed run_commands was answered with
// overrideInput, one command under intentgate exec, and returns it.
func cline3Rewritten(t *testing.T, what string, out hookOut) string {
	t.Helper()
	var a struct {
		Cancel   bool `json:"cancel"`
		Override struct {
			Commands []json.RawMessage `json:"commands"`
		} `json:"overrideInput"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &a); err != nil || a.Cancel || len(a.Override.Commands) != 1 {
		t.Fatalf("%s: stdout %q, want overrideInput with one command", what, out.stdout)
	}
	return execCommandOf(t, what, a.Override.Commands[0])
}

func execCommandOf(t *testing.T, what string, raw json.RawMessage) string {
	t.Helper()
	var cmd string
	if err := json.Unmarshal(raw, &cmd); err != nil || !strings.Contains(cmd, " exec --session ") {
		t.Fatalf("%s: the command %s is not run under intentgate exec", what, raw)
	}
	return cmd
}

// shellAgent is how one agent's captured shell events are replayed.
type shellAgent struct {
	agent, version, session string
	pre, post               string                          // captured payload names
	setPre                  func(cmd string) map[string]any // the pre event running cmd
	setPost                 func(cmd string) map[string]any // the post event reporting cmd
	rewritten               func(t *testing.T, what string, out hookOut) string
}

var rewritingShells = []shellAgent{
	{agent: "codex", version: codexVer, session: codexSessID, pre: "08-PreToolUse-Bash", post: "09-PostToolUse-Bash",
		setPre:    func(c string) map[string]any { return map[string]any{"tool_input.command": c} },
		setPost:   func(c string) map[string]any { return map[string]any{"tool_input.command": c} },
		rewritten: codexRewritten},
	{agent: "gemini", version: geminiVer, session: geminiSess, pre: "10-BeforeTool-run_shell_command", post: "11-AfterTool-run_shell_command",
		setPre:    func(c string) map[string]any { return map[string]any{"tool_input.command": c} },
		setPost:   func(c string) map[string]any { return map[string]any{"tool_input.command": c} },
		rewritten: geminiRewritten},
	{agent: "cline", version: cline3, session: cline3Task, pre: "12-tool_call-run_commands", post: "13-tool_result-run_commands",
		setPre: func(c string) map[string]any {
			return map[string]any{"tool_call.input": map[string]any{"commands": []string{c}}}
		},
		setPost: func(c string) map[string]any {
			return map[string]any{"tool_result.input": map[string]any{"commands": []string{c}}}
		},
		rewritten: cline3Rewritten},
}

// TestExternalShellsRunConfined: for Codex, Gemini CLI and Cline 3, the
// rewritten command, run by a shell as the agent runs it, does exactly what
// the original said however it is quoted; the kernel refuses its writes
// outside the intent's scope and to the governance files; and the post
// event, which reports the rewritten input, is matched with its pre event
// and recorded as the command the agent asked for.
func TestExternalShellsRunConfined(t *testing.T) {
	requireConfinement(t)
	for _, a := range rewritingShells {
		t.Run(a.agent, func(t *testing.T) {
			t.Parallel()
			e := newHookEnv(t, a.agent, map[string]string{"src/keep.txt": "keep\n"})
			e.intentUse(a.session, "INT-001")
			for _, orig := range hostileCommands {
				want, err := exec.Command("bash", "-c", orig).CombinedOutput()
				if err != nil {
					t.Fatalf("bash -c %q: %v", orig, err)
				}
				wrapped := a.rewritten(t, orig, e.sendCaptured(a.version, a.pre, a.setPre(orig)))
				cmd := exec.Command("bash", "-c", wrapped)
				cmd.Dir = e.ws
				got, err := cmd.CombinedOutput()
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("the rewritten command of %q printed %q (%v), the original %q", orig, got, err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(e.ws, "src/escaped")); err == nil {
				t.Error("a quoted string of the command ran as a command")
			}

			intents := e.read(".orchestration/active_intents.yaml")
			wrapped := a.rewritten(t, "attack", e.sendCaptured(a.version, a.pre, a.setPre(shellAttack)))
			cmd := exec.Command("bash", "-c", wrapped)
			cmd.Dir = e.ws
			out, _ := cmd.CombinedOutput()
			if got := e.read(".orchestration/active_intents.yaml"); got != intents {
				t.Errorf("the command changed active_intents.yaml:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(e.ws, "docs.md")); err == nil {
				t.Error("the command wrote docs.md, outside the intent's scope")
			}
			if e.read("src/ok.txt") != "ok\n" {
				t.Errorf("the command could not write in scope:\n%s", out)
			}
			if !strings.Contains(string(out), "Permission denied") && !strings.Contains(string(out), "Read-only file system") {
				t.Errorf("the refused writes are not in the command's output:\n%s", out)
			}

			// The post event reports the rewritten command: it must find the
			// pre event's picture (no warning) and record the original.
			post := e.sendCaptured(a.version, a.post, a.setPost(wrapped))
			if strings.Contains(post.stderr, "picture") || strings.Contains(post.stdout, "SESSION_REFUSED") {
				t.Errorf("post event: stdout %q, stderr %q; want it matched with its pre event", post.stdout, post.stderr)
			}
			if strings.Contains(post.stdout, "SCOPE_VIOLATION") {
				t.Errorf("post event: %q, want no violation (the command wrote only in scope)", post.stdout)
			}
			rec := e.lastRecord("src/ok.txt")
			if rec.Metadata.IG.Decision == "violation" {
				t.Errorf("src/ok.txt: %+v, want an ordinary change", rec.Metadata.IG)
			}
			if got := recordCommand(t, e, "src/ok.txt"); got != shellAttack {
				t.Errorf("the ledger records the command %q, want the agent's own %q", got, shellAttack)
			}

			// A structured command (newer Codex: argv or PowerShell) cannot
			// carry a shell line: it is refused, never run unconfined.
			if a.agent == "codex" {
				for _, kind := range []string{"argv", "powershell_script"} {
					out := e.sendCaptured(a.version, a.pre, map[string]any{"tool_input": map[string]any{
						"command": "ls", "kind": kind, "program": "ls", "args": []string{}}})
					codexValid(t, "PreToolUse", out)
					if !strings.Contains(out.stdout, `"permissionDecision":"deny"`) || strings.Contains(out.stdout, "updatedInput") {
						t.Errorf("kind %s: %q, want a refusal", kind, out.stdout)
					}
				}
			}
			// A command asking to keep running in the background.
			if a.agent == "gemini" {
				bg := e.sendCaptured(a.version, a.pre, map[string]any{"tool_input.is_background": true})
				if ans := geminiDecode(t, bg); ans.Decision != "deny" || !strings.Contains(ans.Reason, "INVALID_ARGUMENT") || !strings.Contains(ans.Reason, "is_background") {
					t.Errorf("is_background: %q, want a refusal naming it", bg.stdout)
				}
			}
			e.verifyIntact()
		})
	}
}

var hostileCommands = []string{
	`printf '%s|' "a b" 'c'"'"'d' $'e\tf' "$(echo g)" ` + "`echo h`" + ` '\' "\\" '$HOME' && echo`,
	"printf 'line1\\nline2\\n'; echo \"it's\"; echo '\"quoted\"'",
	`x='; touch src/escaped; '; echo "$x"`,
	"echo -- '--session' \"--workspace\" -- \\; \\' \\\" ; echo }{",
	"cat <<'EOF'\n$HOME 'a' \"b\"\nEOF",
}

const shellAttack = `echo '  - id: X' >> .orchestration/active_intents.yaml; echo x > docs.md; echo ok > src/ok.txt; setsid sh -c 'sleep 2; echo late > src/late.txt' &`

// recordCommand is the command of the newest ledger record about rel.
func recordCommand(t *testing.T, e *hookEnv, rel string) string {
	t.Helper()
	b, err := os.ReadFile(e.path(".orchestration/agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var r struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
			Metadata struct {
				IG struct {
					Command string `json:"command"`
				} `json:"dev.intentgate"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(lines[i]), &r) == nil && len(r.Files) > 0 && r.Files[0].Path == rel {
			return r.Metadata.IG.Command
		}
	}
	t.Fatalf("no ledger record for %s", rel)
	return ""
}

// TestUnrewrittenShellsRestoreGovernance: Cursor and the older Cline hook
// protocol cannot rewrite a command, so it runs as the agent wrote it. The
// post event then restores the governance file the command changed, records
// it and the out-of-scope write as violations, and tells the model where the
// protocol lets it (Cline's contextModification; Cursor's
// afterShellExecution has no field for it).
func TestUnrewrittenShellsRestoreGovernance(t *testing.T) {
	const attack = `echo '  - id: X' >> .orchestration/active_intents.yaml; echo x > docs.md`
	for _, c := range []struct {
		agent, session, pre, post string
		set                       func(cmd string) map[string]any
		told                      func(t *testing.T, out hookOut) string // what the model is told, "" if nothing can be
	}{
		{agent: "cursor", session: cursorSession, pre: "beforeShellExecution", post: "afterShellExecution",
			set: func(c string) map[string]any { return map[string]any{"command": c} },
			told: func(t *testing.T, out hookOut) string {
				if a := cursorDecode(t, out); a.Permission != "" {
					t.Errorf("afterShellExecution: %q, want {}", out.stdout)
				}
				return ""
			}},
		{agent: "cline", session: clineSession, pre: "PreToolUse-execute_command", post: "PostToolUse-execute_command",
			set: func(c string) map[string]any {
				return map[string]any{"preToolUse.parameters.command": c, "postToolUse.parameters.command": c}
			},
			told: func(t *testing.T, out hookOut) string { return clineGo(t, "PostToolUse", out).ContextModification }},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			e := newHookEnv(t, c.agent, nil)
			e.intentUse(c.session, "INT-001")
			intents := e.read(".orchestration/active_intents.yaml")
			pre := e.send(c.pre, c.set(attack))
			if strings.Contains(pre.stdout, "exec --session") || strings.Contains(pre.stdout, `"deny"`) || strings.Contains(pre.stdout, `"cancel":true`) {
				t.Fatalf("%s: %q, want the command allowed as it is (no rewrite exists)", c.pre, pre.stdout)
			}
			// The agent runs the command unconfined.
			cmd := exec.Command("bash", "-c", attack)
			cmd.Dir = e.ws
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", attack, err, out)
			}
			told := c.told(t, e.send(c.post, c.set(attack)))
			if got := e.read(".orchestration/active_intents.yaml"); got != intents {
				t.Errorf("active_intents.yaml was not restored:\n%s", got)
			}
			if r := e.lastRecord(".orchestration/active_intents.yaml"); r.Metadata.IG.Decision != "violation" {
				t.Errorf("active_intents.yaml: %+v, want a violation", r.Metadata.IG)
			}
			if r := e.lastRecord("docs.md"); r.Metadata.IG.Decision != "violation" {
				t.Errorf("docs.md: %+v, want a violation", r.Metadata.IG)
			}
			if c.agent == "cline" && (!strings.Contains(told, "SCOPE_VIOLATION") || !strings.Contains(told, "active_intents.yaml") ||
				!strings.Contains(told, "(restored)") || !strings.Contains(told, "docs.md")) {
				t.Errorf("the model was told %q, want both files named and the restore", told)
			}
			e.verifyIntact()
		})
	}
}
