package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const cursorSession = "c0ffee00-cursor-0001"

type cursorAnswer struct {
	Permission        string `json:"permission"`
	UserMessage       string `json:"user_message"`
	AgentMessage      string `json:"agent_message"`
	Continue          *bool  `json:"continue"`
	AdditionalContext string `json:"additional_context"`
}

// cursorDecode requires what Cursor requires: one JSON object, always.
func cursorDecode(t *testing.T, out hookOut) cursorAnswer {
	t.Helper()
	if out.code != 0 {
		t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
	}
	var a cursorAnswer
	dec := json.NewDecoder(strings.NewReader(out.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("stdout %q: %v", out.stdout, err)
	}
	return a
}

func cursorEmpty(t *testing.T, what string, out hookOut) {
	t.Helper()
	cursorDecode(t, out)
	if strings.TrimSpace(out.stdout) != "{}" {
		t.Fatalf("%s: stdout %q, want {}", what, out.stdout)
	}
}

func cursorDenial(t *testing.T, out hookOut) denialOut {
	t.Helper()
	a := cursorDecode(t, out)
	if a.Permission != "deny" || a.UserMessage == "" {
		t.Fatalf("stdout %q, want permission deny with a user_message", out.stdout)
	}
	return decodeDenial(t, a.AgentMessage)
}

func TestCursorContract(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "cursor", map[string]string{"src/app.txt": "one\ntwo\n"})

	if a := cursorDecode(t, e.send("sessionStart", nil)); !strings.Contains(a.AdditionalContext, "INTENT PROTOCOL") {
		t.Errorf("sessionStart: %+v", a)
	}
	if d := cursorDenial(t, e.send("preToolUse-Edit", nil)); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("edit before any intent: %+v", d)
	}
	if d := cursorDenial(t, e.send("beforeMCPExecution", nil)); d.Code != "INTENT_NOT_ACTIVE" {
		t.Errorf("select_active_intent INT-009 through MCP: %+v", d)
	}
	a := cursorDecode(t, e.send("beforeSubmitPrompt", nil))
	if a.Continue == nil || !*a.Continue || e.sessionIntent(cursorSession) != "INT-001" {
		t.Errorf("beforeSubmitPrompt @INT-001: %+v, session intent %q", a, e.sessionIntent(cursorSession))
	}

	// beforeReadFile carries what the agent is shown: the baseline.
	if d := cursorDenial(t, e.send("preToolUse-Edit", nil)); d.Code != "NOT_READ" {
		t.Errorf("edit of an unread file: %+v", d)
	}
	cursorEmpty(t, "beforeReadFile", e.send("beforeReadFile", nil))
	cursorEmpty(t, "preToolUse Edit", e.send("preToolUse-Edit", nil))
	e.write("src/app.txt", "one\nTWO\nthree\n")
	cursorEmpty(t, "afterFileEdit", e.send("afterFileEdit", nil))
	if r := e.lastRecord("src/app.txt"); r.Metadata.IG.Mutation != "modify" || !slices.Equal(r.ranges(t, "one\nTWO\nthree\n"), []string{"2-3"}) {
		t.Errorf("afterFileEdit: %s %v", r.Metadata.IG.Mutation, r.ranges(t, ""))
	}
	// Without a pre event, the old content is worked back from the edits.
	e.write("src/app.txt", "one\nTWO\n3\n")
	cursorEmpty(t, "afterFileEdit", e.send("afterFileEdit", map[string]any{"edits": []any{map[string]any{"old_string": "three", "new_string": "3"}}}))
	if r := e.lastRecord("src/app.txt"); !slices.Equal(r.ranges(t, "one\nTWO\n3\n"), []string{"3-3"}) || r.Metadata.IG.Before != sha("one\nTWO\nthree\n") {
		t.Errorf("afterFileEdit without a pre event: %v before %s", r.ranges(t, ""), r.Metadata.IG.Before)
	}

	// Shown other bytes than the file holds: no baseline.
	cursorEmpty(t, "beforeReadFile", e.send("beforeReadFile", map[string]any{"content": "stale\n"}))
	e.write("src/app.txt", "changed elsewhere\n")
	if d := cursorDenial(t, e.send("preToolUse-Edit", nil)); d.Code != "STALE_FILE" {
		t.Errorf("edit after an outside change: %+v", d)
	}
	if d := cursorDenial(t, e.send("preToolUse-Write", map[string]any{"tool_input.file_path": e.path("lib/x.txt")})); d.Code != "SCOPE_VIOLATION" || d.Path != "lib/x.txt" {
		t.Errorf("write out of scope: %+v", d)
	}
	cursorEmpty(t, "preToolUse for a shell call (answered by beforeShellExecution)", e.send("preToolUse-Write", map[string]any{"tool_name": "Shell", "tool_input": map[string]any{"command": "ls"}}))

	cursorEmpty(t, "beforeShellExecution", e.send("beforeShellExecution", nil))
	e.write("out.txt", "hi\n")
	cursorEmpty(t, "afterShellExecution", e.send("afterShellExecution", nil))
	if r := e.lastRecord("out.txt"); r.Metadata.IG.Decision != "violation" || r.Metadata.IG.Agent != "cursor" {
		t.Errorf("out.txt: %+v", r.Metadata.IG)
	}

	for _, bad := range []string{"", "[]", `{"hook_event_name":"beforeReadFile"}`} {
		out := e.run([]byte(bad))
		if d := cursorDenial(t, out); d.Code != "HOOK_ERROR" || out.stderr == "" {
			t.Errorf("malformed %q: %+v, stderr %q", bad, d, out.stderr)
		}
	}
}
