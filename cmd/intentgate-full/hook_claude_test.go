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

// The captured Claude Code session (testdata/hooks/claude-code), each tool's
// effect applied between its pre and post events as Claude Code applies it.
const claudeSession = "760414d5-7830-476e-ac83-f4d52c3e1995"

// claudeDeny decodes Claude Code's refusal form, and nothing else:
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":...}}.
func claudeDeny(t *testing.T, out hookOut) denialOut {
	t.Helper()
	if out.code != 0 {
		t.Fatalf("exit %d, want 0 (a refusal is an answer)", out.code)
	}
	m := decodeObject(t, out.stdout)
	if !slices.Equal(keysOf(m), []string{"hookSpecificOutput"}) {
		t.Fatalf("stdout keys %v, want only hookSpecificOutput: %s", keysOf(m), out.stdout)
	}
	var hso struct {
		Event    string `json:"hookEventName"`
		Decision string `json:"permissionDecision"`
		Reason   string `json:"permissionDecisionReason"`
	}
	raw, _ := json.Marshal(m["hookSpecificOutput"])
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hso); err != nil {
		t.Fatalf("hookSpecificOutput %s: %v", raw, err)
	}
	if hso.Event != "PreToolUse" || hso.Decision != "deny" {
		t.Fatalf("hookSpecificOutput = %+v, want a PreToolUse deny", hso)
	}
	return decodeDenial(t, hso.Reason)
}

func claudeAllowed(t *testing.T, what string, out hookOut) {
	t.Helper()
	if out.code != 0 || out.stdout != "" {
		t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit 0 and no output (no opinion)", what, out.code, out.stdout, out.stderr)
	}
}

func claudeContext(t *testing.T, out hookOut, event string) string {
	t.Helper()
	var m struct {
		HSO struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &m); err != nil || m.HSO.Event != event {
		t.Fatalf("stdout %q: want hookSpecificOutput for %s (%v)", out.stdout, event, err)
	}
	return m.HSO.Context
}

func TestClaudeCodeCapturedSession(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", map[string]string{"README.md": "line1\nalpha\nline3\n"})

	d := claudeDeny(t, e.send("PreToolUse-Write", nil))
	if d.Code != "NO_ACTIVE_INTENT" || d.Tool != "write_to_file" {
		t.Errorf("Write before any intent: %+v, want NO_ACTIVE_INTENT on write_to_file", d)
	}
	if out := e.intentUse(claudeSession, "INT-001"); !strings.Contains(out, "active intent INT-001") {
		t.Errorf("intent use: %q", out)
	}

	steps := []struct {
		pre, post string
		apply     func()
	}{
		{"PreToolUse-Write", "PostToolUse-Write", func() { e.write("src/new.txt", "one\ntwo\n") }},
		{"PreToolUse-Read", "PostToolUse-Read", nil},
		{"PreToolUse-Write-2", "PostToolUse-Write-2", func() { e.write("src/new.txt", "one\nTWO\nthree\n") }},
		{"PreToolUse-Read-2", "PostToolUse-Read-2", nil},
		{"PreToolUse-Edit", "PostToolUse-Edit", func() { e.write("README.md", "line1\nbeta\ngamma\nline3\n") }},
	}
	for _, s := range steps {
		claudeAllowed(t, s.pre, e.send(s.pre, nil))
		if s.apply != nil {
			s.apply()
		}
		claudeAllowed(t, s.post, e.send(s.post, nil))
	}

	claudeRewritten(t, e, e.send("PreToolUse-Bash", nil))
	e.write("bash.txt", "hi\n")
	out := e.send("PostToolUse-Bash", nil)
	var block struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &block); err != nil || block.Decision != "block" ||
		!strings.Contains(block.Reason, "SCOPE_VIOLATION") || !strings.Contains(block.Reason, "bash.txt: outside the owned_scope of INT-001") {
		t.Errorf("PostToolUse-Bash: stdout %q, want decision block naming bash.txt", out.stdout)
	}
	claudeAllowed(t, "Stop", e.send("Stop", nil))

	type want struct {
		decision, mutation, path, callID string
		ranges                           []string
		content                          string
	}
	wants := []want{
		{"deny", "denial", "src/new.txt", "toolu_1", nil, ""},
		{"allow", "create", "src/new.txt", "toolu_1", []string{"1-2"}, "one\ntwo\n"},
		{"allow", "modify", "src/new.txt", "toolu_3", []string{"2-3"}, "one\nTWO\nthree\n"},
		{"allow", "modify", "README.md", "toolu_5", []string{"2-3"}, "line1\nbeta\ngamma\nline3\n"},
		{"violation", "violation", "bash.txt", "toolu_6", []string{"1-1"}, "hi\n"},
	}
	recs := e.ledger()
	if len(recs) != len(wants) {
		for _, r := range recs {
			t.Logf("record: %s %s %s", r.Metadata.IG.Decision, r.Metadata.IG.Mutation, r.path())
		}
		t.Fatalf("ledger has %d records, want %d", len(recs), len(wants))
	}
	for i, w := range wants {
		r := recs[i]
		m := r.Metadata.IG
		got := r.ranges(t, w.content)
		if m.Decision != w.decision || m.Mutation != w.mutation || r.path() != w.path || m.CallID != w.callID ||
			!slices.Equal(got, w.ranges) || m.Agent != "claude-code" || m.Session != claudeSession {
			t.Errorf("record %d = %s %s %s call %s ranges %v agent %s session %s; want %s %s %s call %s ranges %v",
				i, m.Decision, m.Mutation, r.path(), m.CallID, got, m.Agent, m.Session, w.decision, w.mutation, w.path, w.callID, w.ranges)
		}
		if i > 0 && m.Intent != "INT-001" {
			t.Errorf("record %d intent %q, want INT-001", i, m.Intent)
		}
	}
	if m := recs[3].Metadata.IG; m.Before != sha("line1\nalpha\nline3\n") || m.After != sha("line1\nbeta\ngamma\nline3\n") {
		t.Errorf("Edit record hashes before %s after %s, want the originalFile's and the file's", m.Before, m.After)
	}
}

func TestClaudeCodeDeny(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", map[string]string{"src/a.go": "package a\n"})
	e.intentUse(claudeSession, "INT-001")
	for _, tc := range []struct {
		path, code, rel string
	}{
		{e.path("lib/x.go"), "SCOPE_VIOLATION", "lib/x.go"},
		{e.path(".claude/settings.json"), "PROTECTED_PATH", ".claude/settings.json"},
		{e.path(".orchestration/active_intents.yaml"), "PROTECTED_PATH", ".orchestration/active_intents.yaml"},
		{e.ws + "/src/../../outside.txt", "PATH_ESCAPE", ""},
		{filepath.Join(filepath.Dir(e.ws), "elsewhere.txt"), "PATH_ESCAPE", ""},
	} {
		d := claudeDeny(t, e.send("PreToolUse-Write", map[string]any{"tool_input.file_path": tc.path}))
		if d.Code != tc.code || (tc.rel != "" && d.Path != tc.rel) {
			t.Errorf("Write %s: %+v, want %s on %s", tc.path, d, tc.code, tc.rel)
		}
		if tc.code == "SCOPE_VIOLATION" && (d.Intent != "INT-001" || d.Hint == "") {
			t.Errorf("Write %s: %+v, want intent INT-001 and a hint", tc.path, d)
		}
	}
	// Refusals are evidence.
	denials := 0
	for _, r := range e.ledger() {
		if r.Metadata.IG.Decision == "deny" {
			denials++
		}
	}
	if denials != 5 {
		t.Errorf("ledger holds %d denials, want 5", denials)
	}
	// Reads outside the workspace are the agent's own business.
	claudeAllowed(t, "Read outside", e.send("PreToolUse-Read", map[string]any{"tool_input.file_path": filepath.Join(filepath.Dir(e.ws), "notes.txt")}))
}

func TestClaudeCodeStaleEdit(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", map[string]string{"src/a.go": "v1\n", "src/b.go": "b\n"})
	e.intentUse(claudeSession, "INT-001")
	read := func(rel, shown string) {
		t.Helper()
		set := map[string]any{"tool_input.file_path": e.path(rel)}
		claudeAllowed(t, "PreToolUse-Read", e.send("PreToolUse-Read", set))
		set["tool_response.file.filePath"] = e.path(rel)
		set["tool_response.file.content"] = shown
		set["tool_response.file.numLines"] = strings.Count(shown, "\n") + 1
		set["tool_response.file.totalLines"] = strings.Count(shown, "\n") + 1
		claudeAllowed(t, "PostToolUse-Read", e.send("PostToolUse-Read", set))
	}
	edit := func(rel string) hookOut {
		return e.send("PreToolUse-Edit", map[string]any{"tool_input.file_path": e.path(rel)})
	}

	read("src/a.go", "v1\n")
	e.write("src/a.go", "v2\n") // someone else changes it
	d := claudeDeny(t, edit("src/a.go"))
	if d.Code != "STALE_FILE" || d.Expected != sha("v1\n") || d.Actual != sha("v2\n") {
		t.Errorf("Edit after an outside change: %+v, want STALE_FILE v1 -> v2", d)
	}
	read("src/a.go", "v2\n")
	claudeAllowed(t, "Edit after reading again", edit("src/a.go"))

	if d := claudeDeny(t, edit("src/b.go")); d.Code != "NOT_READ" {
		t.Errorf("Edit of an unread file: %+v, want NOT_READ", d)
	}
	// Shown other bytes than the file holds: no baseline.
	read("src/b.go", "something else\n")
	if d := claudeDeny(t, edit("src/b.go")); d.Code != "NOT_READ" {
		t.Errorf("Edit after a read that showed other content: %+v, want NOT_READ", d)
	}
	// A partial read is no baseline either.
	claudeAllowed(t, "partial read", e.send("PostToolUse-Read", map[string]any{
		"tool_input.file_path": e.path("src/b.go"), "tool_input.offset": 2, "tool_input.limit": 1,
		"tool_response.file.content": "b\n"}))
	if d := claudeDeny(t, edit("src/b.go")); d.Code != "NOT_READ" {
		t.Errorf("Edit after a partial read: %+v, want NOT_READ", d)
	}
}

func TestClaudeCodeBashInAndOutOfScope(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", map[string]string{"README.md": "a\nb\nc\n"})
	e.intentUse(claudeSession, "INT-001")
	claudeRewritten(t, e, e.send("PreToolUse-Bash", nil))
	e.write("src/in.txt", "x\ny\n")
	e.write("README.md", "a\nB\nc\n")
	e.write("out.txt", "no\n")
	out := e.send("PostToolUse-Bash", nil)
	var block struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out.stdout), &block); err != nil || block.Decision != "block" {
		t.Fatalf("stdout %q, want a block", out.stdout)
	}
	if !strings.Contains(block.Reason, "out.txt: outside the owned_scope") || strings.Contains(block.Reason, "src/in.txt") || strings.Contains(block.Reason, "  README.md:") {
		t.Errorf("reason %q, want out.txt named and the in-scope files not", block.Reason)
	}
	if r := e.lastRecord("src/in.txt"); r.Metadata.IG.Mutation != "create" || !slices.Equal(r.ranges(t, "x\ny\n"), []string{"1-2"}) {
		t.Errorf("src/in.txt: %+v", r.Metadata.IG)
	}
	if r := e.lastRecord("README.md"); r.Metadata.IG.Mutation != "modify" || !slices.Equal(r.ranges(t, "a\nB\nc\n"), []string{"2-2"}) {
		t.Errorf("README.md: %s ranges %v, want modify 2-2", r.Metadata.IG.Mutation, r.ranges(t, ""))
	}
	if r := e.lastRecord("out.txt"); r.Metadata.IG.Decision != "violation" || r.Metadata.IG.Tool != "execute_command" {
		t.Errorf("out.txt: %+v, want a violation of execute_command", r.Metadata.IG)
	}
	// A touched file whose content did not change is no change.
	claudeRewritten(t, e, e.send("PreToolUse-Bash", map[string]any{"tool_use_id": "toolu_7"}))
	e.write("README.md", "a\nB\nc\n")
	claudeAllowed(t, "PostToolUse-Bash (touch)", e.send("PostToolUse-Bash", map[string]any{"tool_use_id": "toolu_7"}))
}

func TestClaudeCodeBashRevert(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", map[string]string{
		"docs/guide.md":              "keep\n",
		".orchestration/config.yaml": "# how intentgate treats violations\non_violation: revert\n",
	})
	e.intentUse(claudeSession, "INT-001")
	claudeRewritten(t, e, e.send("PreToolUse-Bash", nil))
	e.write("docs/guide.md", "changed\n")
	e.write("out.txt", "no\n")
	e.write("src/ok.txt", "fine\n")
	out := e.send("PostToolUse-Bash", nil)
	var block struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out.stdout), &block); err != nil || block.Decision != "block" ||
		!strings.Contains(block.Reason, "docs/guide.md") || !strings.Contains(block.Reason, "restored") {
		t.Fatalf("stdout %q, want a block saying what was restored", out.stdout)
	}
	if got := e.read("docs/guide.md"); got != "keep\n" {
		t.Errorf("docs/guide.md = %q, want it restored", got)
	}
	if _, err := os.Stat(e.path("out.txt")); !os.IsNotExist(err) {
		t.Errorf("out.txt still exists (%v), want it removed", err)
	}
	if got := e.read("src/ok.txt"); got != "fine\n" {
		t.Errorf("src/ok.txt = %q, want the in-scope change kept", got)
	}
}

func TestClaudeCodeMalformed(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	for _, tc := range []struct {
		name, input string
		deny        bool
	}{
		{"not json", "not json", true},
		{"empty", "", true},
		{"no event name", `{"session_id":"s","cwd":"/"}`, true},
		{"Write without file_path", `{"session_id":"s","cwd":"` + e.ws + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"content":"x"}}`, true},
		{"tool_input not an object", `{"session_id":"s","cwd":"` + e.ws + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":"x"}`, true},
		{"a broken post event", `{"session_id":"s","cwd":"` + e.ws + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := e.run([]byte(tc.input))
			if !strings.Contains(out.stderr, "cannot read the event") {
				t.Errorf("stderr %q, want the reason", out.stderr)
			}
			if tc.deny {
				if d := claudeDeny(t, out); d.Code != "HOOK_ERROR" {
					t.Errorf("refusal %+v, want HOOK_ERROR", d)
				}
				return
			}
			m := decodeObject(t, out.stdout)
			if _, ok := m["systemMessage"]; !ok || m["hookSpecificOutput"] != nil || out.code != 0 {
				t.Errorf("stdout %q exit %d, want only a systemMessage", out.stdout, out.code)
			}
		})
	}
	cmd := exec.Command(e2eBinary(t), "hook", "no-such-agent")
	cmd.Stdin = strings.NewReader("{}")
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("unknown agent: %v, want exit 2", err)
	}
}

func TestClaudeCodeSessionStartAndPrompt(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	ctx := claudeContext(t, e.send("SessionStart", nil), "SessionStart")
	for _, want := range []string{"INTENT PROTOCOL", "STALE_FILE", "- INT-001 [IN_PROGRESS] app; owned_scope: src/**, README.md",
		"- INT-009 [PENDING] docs", "This session has not selected an intent yet.", "an @ followed by the intent's id"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("SessionStart context lacks %q", want)
		}
	}
	// Agents that repeat the context in their prompt event (Gemini CLI)
	// must not select an intent with it.
	if strings.Contains(ctx, "@INT-") {
		t.Errorf("SessionStart context names an intent after an @, which would select it when repeated: %q", ctx)
	}
	claudeAllowed(t, "a prompt naming no intent", e.send("UserPromptSubmit", nil))
	ctx = claudeContext(t, e.send("UserPromptSubmit", map[string]any{"prompt": "please finish @INT-009."}), "UserPromptSubmit")
	if !strings.Contains(ctx, "INTENT_NOT_ACTIVE") {
		t.Errorf("@INT-009 context %q, want INTENT_NOT_ACTIVE", ctx)
	}
	ctx = claudeContext(t, e.send("UserPromptSubmit", map[string]any{"prompt": "mail me at a@b.c, and go on with @INT-001."}), "UserPromptSubmit")
	if !strings.Contains(ctx, "<intent_context>") || !strings.Contains(ctx, `id="INT-001"`) {
		t.Errorf("@INT-001 context %q, want the intent's context", ctx)
	}
	if got := e.sessionIntent(claudeSession); got != "INT-001" {
		t.Errorf("session intent %q, want INT-001", got)
	}
	claudeAllowed(t, "Write after @INT-001", e.send("PreToolUse-Write", nil))
	ctx = claudeContext(t, e.send("SessionStart", map[string]any{"source": "resume"}), "SessionStart")
	if !strings.Contains(ctx, "This session's active intent: INT-001.") {
		t.Errorf("resumed session context lacks the active intent")
	}
}

func TestClaudeCodeSelectThroughMCP(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	mcp := func(tool string, input map[string]any) hookOut {
		return e.send("PreToolUse-Write", map[string]any{"tool_name": tool, "tool_input": input})
	}
	if d := claudeDeny(t, mcp("mcp__github__create_issue", map[string]any{"title": "x"})); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("an MCP tool before any intent: %+v, want NO_ACTIVE_INTENT", d)
	}
	if d := claudeDeny(t, mcp("mcp__intentgate__select_active_intent", map[string]any{"intent_id": "INT-009"})); d.Code != "INTENT_NOT_ACTIVE" {
		t.Errorf("selecting INT-009: %+v, want INTENT_NOT_ACTIVE", d)
	}
	claudeAllowed(t, "selecting INT-001", mcp("mcp__intentgate__select_active_intent", map[string]any{"intent_id": "INT-001"}))
	if got := e.sessionIntent(claudeSession); got != "INT-001" {
		t.Errorf("session intent %q, want INT-001", got)
	}
	claudeAllowed(t, "an MCP tool with an intent", mcp("mcp__github__create_issue", map[string]any{"title": "x"}))
	// No server is trusted by its name: a tool of a server named intentgate
	// is checked like any other, its path canonicalized and held to the scope.
	if d := claudeDeny(t, mcp("mcp__intentgate__write_to_file", map[string]any{"path": "lib/x", "content": ""})); d.Code != "SCOPE_VIOLATION" {
		t.Errorf("a server named intentgate writing outside the scope: %+v, want SCOPE_VIOLATION", d)
	}
	claudeAllowed(t, "a server named intentgate writing inside the scope", mcp("mcp__intentgate__write_to_file", map[string]any{"path": "src/x", "content": ""}))
	for _, args := range []map[string]any{
		{"source": "src/a", "destination": ".claude/settings.json"},
		{"file_path": ".mcp.json"},
		{"target": "lib/y"},
		{"paths": []any{"src/a", ".orchestration/active_intents.yaml"}},
		{"uri": "file://" + e.ws + "/.gemini/settings.json"},
		{"nested": map[string]any{"path": "../outside"}},
	} {
		if d := claudeDeny(t, mcp("mcp__fs__move_file", args)); d.Code == "" {
			t.Errorf("mcp__fs__move_file %v: allowed, want a denial", args)
		}
	}
	claudeAllowed(t, "an https uri is not a path", mcp("mcp__web__fetch", map[string]any{"uri": "https://example.org/.mcp.json"}))
	claudeAllowed(t, "Grep", mcp("Grep", map[string]any{"pattern": "x"}))
}

func TestIntentUse(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	out := e.intentUse("s-1", "INT-001")
	if !strings.Contains(out, "session s-1: active intent INT-001") || !strings.Contains(out, "<intent_context>") {
		t.Errorf("intent use output %q", out)
	}
	if got := e.sessionIntent("s-1"); got != "INT-001" {
		t.Errorf("session intent %q, want INT-001", got)
	}
	for _, args := range [][]string{
		{"intent", "use", "INT-009", "--session", "s-1", "-w", e.ws},
		{"intent", "use", "INT-404", "--session", "s-1", "-w", e.ws},
		{"intent", "use", "INT-001", "-w", e.ws},
	} {
		out, err := exec.Command(e2eBinary(t), args...).CombinedOutput()
		if err == nil {
			t.Errorf("%v succeeded: %s", args, out)
		}
	}
	if got := e.sessionIntent("s-1"); got != "INT-001" {
		t.Errorf("a refused selection changed the session's intent to %q", got)
	}
}

// A global install's hook stays silent in a workspace intentgate does not
// govern; a project's own hook fails closed there.
func TestHookOnlyGoverned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	e := &hookEnv{t: t, agent: "claude-code", ws: dir}
	claudeAllowed(t, "--only-governed", e.run(e.payload("PreToolUse-Write", nil), "--only-governed"))
	if _, err := os.Stat(filepath.Join(dir, ".orchestration")); !os.IsNotExist(err) {
		t.Errorf("--only-governed created .orchestration (%v)", err)
	}
	if d := claudeDeny(t, e.run(e.payload("PreToolUse-Write", nil))); d.Code != "HOOK_ERROR" || !strings.Contains(d.Message, "not governed") {
		t.Errorf("ungoverned without --only-governed: %+v, want HOOK_ERROR", d)
	}
	claudeAllowed(t, "a read, ungoverned", e.run(e.payload("PreToolUse-Read", nil)))
	if _, err := os.Stat(filepath.Join(dir, ".orchestration")); !os.IsNotExist(err) {
		t.Errorf("an ungoverned workspace got .orchestration (%v)", err)
	}
	// The workspace is found from a subdirectory of it.
	g := newHookEnv(t, "claude-code", nil)
	if err := os.MkdirAll(g.path("src/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := claudeDeny(t, g.run(g.payload("PreToolUse-Write", map[string]any{"cwd": g.path("src/deep")}), "--only-governed"))
	if d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("from a subdirectory: %+v, want NO_ACTIVE_INTENT", d)
	}
	// A model that cd'ed out of the workspace still writes into it governed.
	d = claudeDeny(t, g.run(g.payload("PreToolUse-Write", map[string]any{"cwd": dir}), "--only-governed"))
	if d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("from outside the workspace: %+v, want NO_ACTIVE_INTENT", d)
	}
	// So does the project directory Claude Code names for its hooks.
	cmd := exec.Command(e2eBinary(t), "hook", "claude-code", "--only-governed")
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+g.ws)
	cmd.Stdin = strings.NewReader(string(g.payload("PreToolUse-Bash", map[string]any{"cwd": dir})))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if d := claudeDeny(t, hookOut{stdout: string(out)}); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("Bash from outside with CLAUDE_PROJECT_DIR: %+v, want NO_ACTIVE_INTENT", d)
	}
}
