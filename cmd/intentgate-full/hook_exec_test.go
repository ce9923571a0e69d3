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

// claudeRewritten checks that a PreToolUse Bash was answered with the same
// input, its command wrapped in `intentgate exec`, and returns that command.
func claudeRewritten(t *testing.T, e *hookEnv, out hookOut) string {
	t.Helper()
	var m struct {
		HSO struct {
			Event    string                     `json:"hookEventName"`
			Decision string                     `json:"permissionDecision"`
			Input    map[string]json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if out.code != 0 || json.Unmarshal([]byte(out.stdout), &m) != nil || m.HSO.Event != "PreToolUse" || m.HSO.Decision != "allow" {
		t.Fatalf("PreToolUse Bash: exit %d, stdout %q; want an allow with updatedInput", out.code, out.stdout)
	}
	var cmd string
	if err := json.Unmarshal(m.HSO.Input["command"], &cmd); err != nil || !strings.Contains(cmd, " exec --session ") {
		t.Fatalf("updatedInput.command = %s, want the command under intentgate exec", m.HSO.Input["command"])
	}
	if _, ok := m.HSO.Input["description"]; !ok {
		t.Errorf("updatedInput lost the other fields of the input: %v", keysOfRaw(m.HSO.Input))
	}
	return cmd
}

func keysOfRaw(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestClaudeCodeBashRunsConfined: the rewritten command, run by a shell as
// Claude Code runs it, does exactly what the original said, however it is
// quoted, and the kernel refuses its writes outside the intent's scope and to
// the governance files.
func TestClaudeCodeBashRunsConfined(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	e := newHookEnv(t, "claude-code", map[string]string{"src/keep.txt": "keep\n"})
	e.intentUse(claudeSession, "INT-001")
	hostile := []string{
		`printf '%s|' "a b" 'c'"'"'d' $'e\tf' "$(echo g)" ` + "`echo h`" + ` '\' "\\" '$HOME' && echo`,
		"printf 'line1\\nline2\\n'; echo \"it's\"; echo '\"quoted\"'",
		`x='; touch src/escaped; '; echo "$x"`,
		"echo -- '--session' \"--workspace\" -- \\; \\' \\\" ; echo }{",
	}
	for _, orig := range hostile {
		want, err := exec.Command("bash", "-c", orig).CombinedOutput()
		if err != nil {
			t.Fatalf("bash -c %q: %v", orig, err)
		}
		wrapped := claudeRewritten(t, e, e.send("PreToolUse-Bash", map[string]any{"tool_input.command": orig}))
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
	attack := `echo '  - id: X' >> .orchestration/active_intents.yaml; echo x > docs.md; echo ok > src/ok.txt; setsid sh -c 'sleep 2; echo late > src/late.txt' &`
	wrapped := claudeRewritten(t, e, e.send("PreToolUse-Bash", map[string]any{"tool_input.command": attack}))
	cmd := exec.Command("bash", "-c", wrapped)
	cmd.Dir = e.ws
	out, _ := cmd.CombinedOutput()
	if got := e.read(".orchestration/active_intents.yaml"); got != intents {
		t.Errorf("the Bash command changed active_intents.yaml:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "docs.md")); err == nil {
		t.Error("the Bash command wrote docs.md, outside the intent's scope")
	}
	if e.read("src/ok.txt") != "ok\n" {
		t.Errorf("the Bash command could not write in scope:\n%s", out)
	}
	if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("the refused writes are not in the command's output:\n%s", out)
	}
	// Claude Code reports the command's output on its post event: the
	// writes the sandbox refused are recorded in the ledger as refusals.
	e.send("PostToolUse-Bash", map[string]any{"tool_input.command": wrapped, "tool_response.stderr": string(out)})
	refused := map[string]string{}
	for _, l := range sbxLedger(t, e.ws) {
		ig := l.Metadata.IG
		if ig.Decision != "deny" || ig.Tool != "execute_command" || len(l.Files) != 1 {
			continue
		}
		var d struct {
			Code string `json:"error"`
		}
		if json.Unmarshal(ig.Denial, &d) == nil {
			refused[l.Files[0].Path] = d.Code
		}
	}
	if refused[".orchestration/active_intents.yaml"] != "PROTECTED_PATH" || refused["docs.md"] != "SCOPE_VIOLATION" {
		t.Errorf("refusals recorded from the post event: %v, want PROTECTED_PATH for .orchestration/active_intents.yaml and SCOPE_VIOLATION for docs.md", refused)
	}

	// Background commands are refused in the agent's words.
	bg := e.send("PreToolUse-Bash", map[string]any{"tool_input.run_in_background": true})
	if !strings.Contains(bg.stdout, `"permissionDecision":"deny"`) || !strings.Contains(bg.stdout, "INVALID_ARGUMENT") || !strings.Contains(bg.stdout, "background") {
		t.Errorf("run_in_background: %q, want a refusal naming it", bg.stdout)
	}
}
