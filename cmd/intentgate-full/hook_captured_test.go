package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Contract tests on payloads captured from the real agents, at the versions
// named by their directories under testdata/captured (see its README): each
// is sent to the built binary as the agent sent it, in a temporary workspace.

// captured is testdata/captured/<agent>/<version>/<name>.json with the
// workspace in place of the placeholder and set applied.
func (e *hookEnv) captured(version, name string, set map[string]any) []byte {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "captured", e.agent, version, name+".json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	for path, v := range set {
		keys := strings.Split(path, ".")
		m := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	out, err := json.Marshal(e.rewrite(doc))
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *hookEnv) sendCaptured(version, name string, set map[string]any) hookOut {
	e.t.Helper()
	out := e.run(e.captured(version, name, set))
	if out.code != 0 {
		e.t.Fatalf("%s: exit %d, stderr %q", name, out.code, out.stderr)
	}
	return out
}

func (e *hookEnv) verifyIntact() {
	e.t.Helper()
	out, err := exec.Command(e2eBinary(e.t), "trace", "verify", "-w", e.ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "INTACT") {
		e.t.Errorf("trace verify: %v\n%s", err, out)
	}
}

// cline3Answer decodes Cline's {"cancel", "errorMessage", "contextModification"}.
type cline3Answer struct {
	Cancel  bool   `json:"cancel"`
	Error   string `json:"errorMessage"`
	Context string `json:"contextModification"`
}

func clineOut(t *testing.T, what string, out hookOut) cline3Answer {
	t.Helper()
	var a cline3Answer
	if err := json.Unmarshal([]byte(out.stdout), &a); err != nil {
		t.Fatalf("%s: stdout %q: %v", what, out.stdout, err)
	}
	return a
}

func clineCancelled(t *testing.T, what string, out hookOut, code string) denialOut {
	t.Helper()
	a := clineOut(t, what, out)
	if !a.Cancel {
		t.Fatalf("%s: %q, want a refusal (%s)", what, out.stdout, code)
	}
	d := decodeDenial(t, a.Error)
	if d.Code != code {
		t.Errorf("%s: %s (%s), want %s", what, d.Code, d.Message, code)
	}
	return d
}

func clineGoesOn(t *testing.T, what string, out hookOut) cline3Answer {
	t.Helper()
	a := clineOut(t, what, out)
	if a.Cancel {
		t.Fatalf("%s: refused: %s", what, a.Error)
	}
	return a
}

const (
	cline3      = "3.0.65"
	cline3Task  = "conv_1795497119260_xoxor25"
	codexVer    = "0.169.0"
	codexSessID = "01a20bfa-97fe-7501-8d12-66ca4db61047"
	geminiVer   = "0.61.0"
	geminiSess  = "645dfb65-d61a-4958-9cf0-25227239cf16"
)

func TestCline3Captured(t *testing.T) {
	e := newHookEnv(t, "cline", map[string]string{"src/a.txt": "alpha\nbeta\ngamma\n", "README.md": "one\n"})
	v := cline3

	clineGoesOn(t, "agent_start", e.sendCaptured(v, "01-agent_start", nil))
	clineGoesOn(t, "read_files before an intent", e.sendCaptured(v, "02-tool_call-read_files", nil))
	clineCancelled(t, "editor creating out.txt before an intent", e.sendCaptured(v, "06-tool_call-editor", nil), "NO_ACTIVE_INTENT")
	clineCancelled(t, "an unknown tool before an intent", e.sendCaptured(v, "06-tool_call-editor",
		map[string]any{"tool_call.name": "brand_new_tool"}), "NO_ACTIVE_INTENT")
	e.intentUse(cline3Task, "INT-001")

	clineCancelled(t, "editor creating out.txt", e.sendCaptured(v, "06-tool_call-editor", nil), "SCOPE_VIOLATION")
	d := clineCancelled(t, "editor on src/a.txt unread", e.sendCaptured(v, "08-tool_call-editor", nil), "NOT_READ")
	if !strings.Contains(d.Hint, "read_files") {
		t.Errorf("NOT_READ hint %q does not name read_files", d.Hint)
	}
	// A ranged read never counts.
	clineGoesOn(t, "ranged read", e.sendCaptured(v, "04-tool_call-read_files", map[string]any{
		"tool_call.input": map[string]any{"files": []any{map[string]any{"path": e.path("src/a.txt"), "start_line": 1, "end_line": 1}}}}))
	clineGoesOn(t, "ranged read result", e.sendCaptured(v, "05-tool_result-read_files", map[string]any{
		"tool_result.input":  map[string]any{"files": []any{map[string]any{"path": e.path("src/a.txt"), "start_line": 1, "end_line": 1}}},
		"tool_result.output": []any{map[string]any{"query": "a", "result": "1 | alpha", "success": true}}}))
	clineCancelled(t, "editor after a ranged read", e.sendCaptured(v, "08-tool_call-editor", nil), "NOT_READ")
	// A result cut short never counts either.
	clineGoesOn(t, "cut read result", e.sendCaptured(v, "03-tool_result-read_files", map[string]any{
		"tool_result.output": []any{map[string]any{"query": "a", "result": "1 | alpha\n\n[Showing lines 1-1 of 3. Use start_line/end_line to read other sections.]", "success": true}}}))
	clineCancelled(t, "editor after a cut read", e.sendCaptured(v, "08-tool_call-editor", nil), "NOT_READ")

	clineGoesOn(t, "whole read", e.sendCaptured(v, "02-tool_call-read_files", nil))
	clineGoesOn(t, "whole read result", e.sendCaptured(v, "03-tool_result-read_files", nil))
	clineGoesOn(t, "editor on src/a.txt", e.sendCaptured(v, "08-tool_call-editor", nil))
	e.write("src/a.txt", "alpha\nBETA\ngamma\n")
	clineGoesOn(t, "editor result", e.sendCaptured(v, "09-tool_result-editor", nil))
	r := e.lastRecord("src/a.txt")
	if m := r.Metadata.IG; m.Mutation != "modify" || m.Agent != "cline" || m.Session != cline3Task || m.CallID != "call_8" {
		t.Errorf("src/a.txt record: %+v", m)
	}
	if got := r.ranges(t, "alpha\nBETA\ngamma\n"); !slices.Equal(got, []string{"2-2"}) {
		t.Errorf("src/a.txt ranges %v, want [2-2]", got)
	}

	clineGoesOn(t, "editor creating src/new.txt", e.sendCaptured(v, "10-tool_call-editor", nil))
	e.write("src/new.txt", "fresh\n")
	clineGoesOn(t, "editor create result", e.sendCaptured(v, "11-tool_result-editor", nil))
	if m := e.lastRecord("src/new.txt").Metadata.IG; m.Mutation != "create" {
		t.Errorf("src/new.txt: %+v, want create", m)
	}

	// Governance files, whatever the tool.
	clineCancelled(t, "editor on a hook script", e.sendCaptured(v, "10-tool_call-editor",
		map[string]any{"tool_call.input.path": e.path(".clinerules/hooks/PreToolUse")}), "PROTECTED_PATH")
	clineCancelled(t, "new_rule", e.sendCaptured(v, "10-tool_call-editor", map[string]any{"tool_call.name": "new_rule",
		"tool_call.input": map[string]any{"path": ".clinerules/hooks/PreToolUse", "content": "exit 0"}}), "PROTECTED_PATH")
	clineCancelled(t, "apply_patch with an indented header", e.sendCaptured(v, "10-tool_call-editor", map[string]any{"tool_call.name": "apply_patch",
		"tool_call.input": map[string]any{"input": "*** Begin Patch\n\t*** Add File: .mcp.json\n+{}\n*** End Patch"}}), "PROTECTED_PATH")

	// A command: what it changed is judged afterwards.
	clineGoesOn(t, "run_commands", e.sendCaptured(v, "12-tool_call-run_commands", nil))
	e.write("src/cmd.txt", "hi\n")
	e.write("leak.txt", "x\n")
	a := clineGoesOn(t, "run_commands result", e.sendCaptured(v, "13-tool_result-run_commands", nil))
	if !strings.Contains(a.Context, "SCOPE_VIOLATION") || !strings.Contains(a.Context, "leak.txt") {
		t.Errorf("run_commands result context %q, want the violation on leak.txt", a.Context)
	}
	if m := e.lastRecord("leak.txt").Metadata.IG; m.Decision != "violation" {
		t.Errorf("leak.txt: %+v, want a violation", m)
	}

	// A change reported after the fact that the pre-hook would have refused.
	e.write("out.txt", "leak\n")
	a = clineGoesOn(t, "editor result for out.txt", e.sendCaptured(v, "07-tool_result-editor", nil))
	if !strings.Contains(a.Context, "SCOPE_VIOLATION") {
		t.Errorf("post event for out.txt: context %q, want SCOPE_VIOLATION", a.Context)
	}
	if m := e.lastRecord("out.txt").Metadata.IG; m.Decision != "violation" {
		t.Errorf("out.txt: %+v, want a violation", m)
	}
	e.verifyIntact()
}

func TestCodexCaptured(t *testing.T) {
	e := newHookEnv(t, "codex", map[string]string{"src/a.txt": "alpha\nbeta\ngamma\n", "README.md": "one\n"})
	v := codexVer
	claudeAllowed(t, "cat before an intent (a read)", e.sendCaptured(v, "03-PreToolUse-Bash", nil))
	e.intentUse(codexSessID, "INT-001")

	d := claudeDeny(t, e.sendCaptured(v, "07-PreToolUse-Bash", nil))
	if d.Code != "NOT_READ" || !strings.Contains(d.Hint, "cat FILE") {
		t.Errorf("patch of an unread file: %+v, want NOT_READ with a hint naming cat", d)
	}
	// A read whose output is not the whole file does not count.
	claudeAllowed(t, "cat", e.sendCaptured(v, "03-PreToolUse-Bash", nil))
	claudeAllowed(t, "cat result, cut", e.sendCaptured(v, "04-PostToolUse-Bash", map[string]any{"tool_response": "alpha\n"}))
	if d := claudeDeny(t, e.sendCaptured(v, "07-PreToolUse-Bash", nil)); d.Code != "NOT_READ" {
		t.Errorf("patch after a partial cat: %+v, want NOT_READ", d)
	}
	claudeAllowed(t, "cat result", e.sendCaptured(v, "04-PostToolUse-Bash", nil))
	claudeAllowed(t, "patch after cat", e.sendCaptured(v, "07-PreToolUse-Bash", nil))
	// Codex applies the patch itself and sends no post event: the change is
	// recorded at the session's next event.
	e.write("src/a.txt", "alpha\nBETA\ngamma\n")

	// sed -n '1,$p' is a whole read too.
	claudeAllowed(t, "sed", e.sendCaptured(v, "05-PreToolUse-Bash", nil))
	claudeAllowed(t, "sed result", e.sendCaptured(v, "06-PostToolUse-Bash", nil))
	if r := e.lastRecord("src/a.txt"); r.Metadata.IG.Mutation != "modify" || r.Metadata.IG.CallID != "call_9" {
		t.Errorf("the patch of src/a.txt: %+v, want a modify of call_9", r.Metadata.IG)
	} else if got := r.ranges(t, "alpha\nBETA\ngamma\n"); !slices.Equal(got, []string{"2-2"}) {
		t.Errorf("patch ranges %v, want [2-2]", got)
	}
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: README.md\n@@\n-one\n+ONE\n*** End Patch\nEOF\n"
	claudeAllowed(t, "patch after sed", e.sendCaptured(v, "07-PreToolUse-Bash", map[string]any{"tool_input.command": patch}))

	for _, header := range []string{"  ", "\t", "\u00a0", "\u3000"} {
		p := "apply_patch <<'EOF'\n*** Begin Patch\n" + header + "*** Update File: .orchestration/active_intents.yaml\n@@\n-a\n+b\n*** End Patch\nEOF\n"
		if d := claudeDeny(t, e.sendCaptured(v, "07-PreToolUse-Bash", map[string]any{"tool_input.command": p})); d.Code != "PROTECTED_PATH" {
			t.Errorf("header indented by %q: %+v, want PROTECTED_PATH", header, d)
		}
	}
	if d := claudeDeny(t, e.sendCaptured(v, "07-PreToolUse-Bash", map[string]any{"tool_name": "apply_patch",
		"tool_input.command": "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"})); d.Code == "" {
		t.Errorf("an unknown header: %+v, want a refusal", d)
	}

	codexRewritten(t, "echo", e.sendCaptured(v, "08-PreToolUse-Bash", nil))
	e.write("out.txt", "hi\n")
	out := e.sendCaptured(v, "09-PostToolUse-Bash", nil)
	if !strings.Contains(out.stdout, `"decision":"block"`) || !strings.Contains(out.stdout, "out.txt: outside the owned_scope") {
		t.Errorf("echo > out.txt: %q, want a block naming out.txt", out.stdout)
	}
	// A shell write to a governance file is recorded as a violation.
	codexRewritten(t, "echo to the intents", e.sendCaptured(v, "08-PreToolUse-Bash", map[string]any{"tool_input.command": "echo x >> .codex/config.toml"}))
	e.write(".codex/config.toml", "x\n")
	out = e.sendCaptured(v, "09-PostToolUse-Bash", map[string]any{"tool_input.command": "echo x >> .codex/config.toml"})
	if !strings.Contains(out.stdout, ".codex/config.toml: a governance file") {
		t.Errorf("shell write to .codex/config.toml: %q, want a block naming it", out.stdout)
	}
	e.verifyIntact()
}

func TestGeminiCaptured(t *testing.T) {
	e := newHookEnv(t, "gemini", map[string]string{"src/a.txt": "alpha\nbeta\ngamma\n", "README.md": "one\ntwo\nthree\n"})
	v := geminiVer
	e.sendCaptured(v, "01-SessionStart", nil)
	// Gemini repeats the session's context in the prompt event: it must not
	// select an intent, even with an example in it.
	raw := string(e.captured(v, "02-BeforeAgent", nil))
	var ba map[string]any
	_ = json.Unmarshal([]byte(raw), &ba)
	prompt := strings.Replace(ba["prompt"].(string), "@INT-001 go", "go", 1)
	prompt = strings.Replace(prompt, "This workspace is governed", "as in @INT-001. This workspace is governed", 1)
	e.sendCaptured(v, "02-BeforeAgent", map[string]any{"prompt": prompt})
	if got := e.sessionIntent(geminiSess); got != "" {
		t.Fatalf("the repeated context selected %q", got)
	}
	e.sendCaptured(v, "02-BeforeAgent", nil) // the user's own @INT-001
	if got := e.sessionIntent(geminiSess); got != "INT-001" {
		t.Fatalf("session intent %q after the user's @INT-001", got)
	}

	// 1 of 3 lines seen: the whole-file overwrite is refused.
	e.sendCaptured(v, "05-BeforeTool-read_file", nil)
	e.sendCaptured(v, "06-AfterTool-read_file", nil)
	deny := func(what string, out hookOut) denialOut {
		t.Helper()
		var m struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(out.stdout), &m); err != nil || m.Decision != "deny" {
			t.Fatalf("%s: %q, want a deny", what, out.stdout)
		}
		return decodeDenial(t, m.Reason)
	}
	overwrite := map[string]any{"tool_input.file_path": e.path("README.md"), "tool_input.content": "x\n"}
	if d := deny("overwrite after a ranged read", e.sendCaptured(v, "07-BeforeTool-write_file", overwrite)); d.Code != "NOT_READ" {
		t.Errorf("overwrite after a ranged read: %+v", d)
	}
	// A read with no range but a truncated result does not count either.
	e.sendCaptured(v, "06-AfterTool-read_file", map[string]any{"tool_input": map[string]any{"file_path": e.path("README.md")}})
	if d := deny("overwrite after a cut read", e.sendCaptured(v, "07-BeforeTool-write_file", overwrite)); d.Code != "NOT_READ" {
		t.Errorf("overwrite after a cut read: %+v", d)
	}
	if d := deny("write_file out.txt", e.sendCaptured(v, "07-BeforeTool-write_file", nil)); d.Code != "SCOPE_VIOLATION" {
		t.Errorf("write_file out.txt: %+v", d)
	}

	e.sendCaptured(v, "03-BeforeTool-read_file", nil)
	e.sendCaptured(v, "04-AfterTool-read_file", nil)
	if out := e.sendCaptured(v, "08-BeforeTool-replace", nil); strings.Contains(out.stdout, `"deny"`) {
		t.Fatalf("replace after a whole read: %q", out.stdout)
	}
	e.write("src/a.txt", "alpha\nBETA\ngamma\n")
	e.sendCaptured(v, "09-AfterTool-replace", nil)
	if got := e.lastRecord("src/a.txt").ranges(t, "alpha\nBETA\ngamma\n"); !slices.Equal(got, []string{"2-2"}) {
		t.Errorf("replace ranges %v, want [2-2]", got)
	}

	// MCP tools as Gemini names them.
	mcp := map[string]any{"tool_name": "mcp_fs_move_file", "tool_input": map[string]any{"source": "src/a.txt", "destination": ".gemini/settings.json"}}
	if d := deny("mcp_fs_move_file", e.sendCaptured(v, "07-BeforeTool-write_file", mcp)); d.Code != "PROTECTED_PATH" {
		t.Errorf("mcp_fs_move_file to .gemini/settings.json: %+v", d)
	}
	e.verifyIntact()
}

// TestClaude2331Captured replays what Claude Code 2.1.331 sent (the
// end-to-end script, captured with INTENTGATE_E2E_CAPTURE). Its hook
// payloads are those 2.1.197 sends plus prompt_id and effort: prompt
// selection, the denied Write, the Read-then-Edit trace and the Bash rewrite
// work on them unchanged. What fails with 2.1.331 is the shell command inside
// Claude's sandbox (see the README's agent table), not the hooks.
func TestClaude2331Captured(t *testing.T) {
	e := newHookEnv(t, "claude-code", map[string]string{"src/app.txt": "line1\nbeta\nline3\n"})
	const v, sess = "2.1.331", "c310b63b-ff11-4efc-ad5f-6266238fb350"
	e.sendCaptured(v, "01-SessionStart", nil)
	e.sendCaptured(v, "02-UserPromptSubmit", nil)
	if got := e.sessionIntent(sess); got != "INT-001" {
		t.Fatalf("session intent %q after @INT-001", got)
	}
	if out := e.sendCaptured(v, "03-PreToolUse-Write", nil); !strings.Contains(out.stdout, `"permissionDecision":"deny"`) ||
		!strings.Contains(out.stdout, "SCOPE_VIOLATION") {
		t.Errorf("Write docs/out.md: %q, want a SCOPE_VIOLATION deny", out.stdout)
	}
	e.sendCaptured(v, "04-PreToolUse-Read", nil)
	e.sendCaptured(v, "05-PostToolUse-Read", nil)
	if out := e.sendCaptured(v, "06-PreToolUse-Edit", nil); strings.Contains(out.stdout, `"deny"`) {
		t.Fatalf("Edit after a whole Read: %q", out.stdout)
	}
	e.write("src/app.txt", "line1\nBETA\nextra\nline3\n")
	e.sendCaptured(v, "07-PostToolUse-Edit", nil)
	if got := e.lastRecord("src/app.txt").ranges(t, "line1\nBETA\nextra\nline3\n"); !slices.Equal(got, []string{"2-3"}) {
		t.Errorf("Edit ranges %v, want [2-3]", got)
	}
	out := e.sendCaptured(v, "10-PreToolUse-Bash", nil)
	if !strings.Contains(out.stdout, `"updatedInput"`) || !strings.Contains(out.stdout, " exec --session ") {
		t.Errorf("Bash was not rewritten to run under intentgate exec: %q", out.stdout)
	}
	e.verifyIntact()
}
