package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const geminiSession = "4f2b1c7e-gemini-0001"

// geminiOut decodes Gemini CLI's answer: always one JSON object, with only
// the fields the hooks reference documents.
type geminiAnswer struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	SystemMessage string `json:"systemMessage"`
	HSO           *struct {
		Event     string                     `json:"hookEventName"`
		Context   string                     `json:"additionalContext"`
		ToolInput map[string]json.RawMessage `json:"tool_input"`
	} `json:"hookSpecificOutput"`
}

func geminiDecode(t *testing.T, out hookOut) geminiAnswer {
	t.Helper()
	if out.code != 0 {
		t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
	}
	var a geminiAnswer
	dec := json.NewDecoder(strings.NewReader(out.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("stdout %q: %v", out.stdout, err)
	}
	return a
}

func geminiAllowed(t *testing.T, what string, out hookOut) {
	t.Helper()
	if a := geminiDecode(t, out); a.Decision != "" || strings.TrimSpace(out.stdout) != "{}" {
		t.Fatalf("%s: stdout %q, want {}", what, out.stdout)
	}
}

func geminiDenial(t *testing.T, out hookOut) denialOut {
	t.Helper()
	a := geminiDecode(t, out)
	if a.Decision != "deny" {
		t.Fatalf("stdout %q, want decision deny", out.stdout)
	}
	return decodeDenial(t, a.Reason)
}

func TestGeminiContract(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "gemini", nil)

	a := geminiDecode(t, e.send("SessionStart", nil))
	if a.HSO == nil || a.HSO.Event != "SessionStart" || !strings.Contains(a.HSO.Context, "INTENT PROTOCOL") {
		t.Errorf("SessionStart: %+v", a)
	}
	if d := geminiDenial(t, e.send("BeforeTool-write_file", nil)); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("write_file before any intent: %+v", d)
	}
	a = geminiDecode(t, e.send("BeforeAgent", nil))
	if a.HSO == nil || a.HSO.Event != "BeforeAgent" || !strings.Contains(a.HSO.Context, "<intent_context>") {
		t.Errorf("BeforeAgent @INT-001: %+v", a)
	}

	geminiAllowed(t, "BeforeTool write_file", e.send("BeforeTool-write_file", nil))
	e.write("src/app.txt", "one\ntwo\n")
	geminiAllowed(t, "AfterTool write_file", e.send("AfterTool-write_file", nil))
	if r := e.lastRecord("src/app.txt"); r.Metadata.IG.Mutation != "create" || !slices.Equal(r.ranges(t, "one\ntwo\n"), []string{"1-2"}) {
		t.Errorf("write_file: %+v", r.Metadata.IG)
	}

	geminiAllowed(t, "BeforeTool read_file", e.send("BeforeTool-read_file", nil))
	geminiAllowed(t, "AfterTool read_file", e.send("AfterTool-read_file", nil))
	geminiAllowed(t, "BeforeTool replace", e.send("BeforeTool-replace", nil))
	e.write("src/app.txt", "one\nTWO\nthree\n")
	geminiAllowed(t, "AfterTool replace", e.send("AfterTool-replace", nil))
	if r := e.lastRecord("src/app.txt"); r.Metadata.IG.Mutation != "modify" || !slices.Equal(r.ranges(t, "one\nTWO\nthree\n"), []string{"2-3"}) {
		t.Errorf("replace: %s %v", r.Metadata.IG.Mutation, r.ranges(t, ""))
	}
	e.write("src/app.txt", "someone else's\n")
	if d := geminiDenial(t, e.send("BeforeTool-replace", nil)); d.Code != "STALE_FILE" {
		t.Errorf("replace after an outside change: %+v", d)
	}
	if d := geminiDenial(t, e.send("BeforeTool-write_file", map[string]any{"tool_input.file_path": e.path("docs/x.md")})); d.Code != "SCOPE_VIOLATION" {
		t.Errorf("write_file out of scope: %+v", d)
	}
	// A read cut short by Gemini is no baseline.
	geminiAllowed(t, "AfterTool read_file, truncated", e.send("AfterTool-read_file", map[string]any{
		"tool_response.llmContent": "[File content truncated: showing lines 1-1 of 2 total lines...]\nsomeone else's"}))
	if d := geminiDenial(t, e.send("BeforeTool-replace", nil)); d.Code != "STALE_FILE" {
		t.Errorf("replace after a truncated read: %+v", d)
	}

	geminiRewritten(t, "BeforeTool run_shell_command", e.send("BeforeTool-run_shell_command", nil))
	e.write("out.txt", "hi\n")
	a = geminiDecode(t, e.send("AfterTool-run_shell_command", nil))
	if a.Decision != "" || a.HSO == nil || a.HSO.Event != "AfterTool" || !strings.Contains(a.HSO.Context, "out.txt: outside the owned_scope") {
		t.Errorf("AfterTool run_shell_command: %+v, want additionalContext naming out.txt (and the result kept)", a)
	}
	if r := e.lastRecord("out.txt"); r.Metadata.IG.Decision != "violation" {
		t.Errorf("out.txt: %+v", r.Metadata.IG)
	}

	out := e.run([]byte(`{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":[1]}`))
	if d := geminiDenial(t, out); d.Code != "HOOK_ERROR" || !strings.Contains(out.stderr, "tool_input") {
		t.Errorf("malformed: %+v, stderr %q", d, out.stderr)
	}
	if got := e.sessionIntent(geminiSession); got != "INT-001" {
		t.Errorf("session intent %q", got)
	}
}
