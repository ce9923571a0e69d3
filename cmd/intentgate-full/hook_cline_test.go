package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const clineSession = "1768039200000-cline"

type clineAnswer struct {
	Cancel              *bool  `json:"cancel"`
	ContextModification string `json:"contextModification"`
	ErrorMessage        string `json:"errorMessage"`
}

func clineDecode(t *testing.T, out hookOut) clineAnswer {
	t.Helper()
	if out.code != 0 {
		t.Fatalf("exit %d (Cline blocks on any non-zero exit), stderr %q", out.code, out.stderr)
	}
	var a clineAnswer
	dec := json.NewDecoder(strings.NewReader(out.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || a.Cancel == nil {
		t.Fatalf("stdout %q: want an object with cancel (%v)", out.stdout, err)
	}
	return a
}

func clineGo(t *testing.T, what string, out hookOut) clineAnswer {
	t.Helper()
	a := clineDecode(t, out)
	if *a.Cancel || a.ErrorMessage != "" {
		t.Fatalf("%s: %q, want cancel false", what, out.stdout)
	}
	return a
}

func clineDenial(t *testing.T, out hookOut) denialOut {
	t.Helper()
	a := clineDecode(t, out)
	if !*a.Cancel || !strings.Contains(a.ContextModification, a.ErrorMessage) {
		t.Fatalf("stdout %q, want cancel with the refusal in errorMessage and in the context", out.stdout)
	}
	return decodeDenial(t, a.ErrorMessage)
}

func TestClineContract(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "cline", nil)

	if a := clineGo(t, "TaskStart", e.send("TaskStart", nil)); !strings.Contains(a.ContextModification, "INTENT PROTOCOL") {
		t.Errorf("TaskStart: %+v", a)
	}
	if d := clineDenial(t, e.send("PreToolUse-write_to_file", nil)); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("write before any intent: %+v", d)
	}
	if a := clineGo(t, "UserPromptSubmit", e.send("UserPromptSubmit", nil)); !strings.Contains(a.ContextModification, "<intent_context>") {
		t.Errorf("UserPromptSubmit @INT-001: %+v", a)
	}

	clineGo(t, "PreToolUse write_to_file", e.send("PreToolUse-write_to_file", nil))
	e.write("src/app.txt", "one\ntwo\n")
	clineGo(t, "PostToolUse write_to_file", e.send("PostToolUse-write_to_file", nil))
	if r := e.lastRecord("src/app.txt"); r.Metadata.IG.Mutation != "create" || !slices.Equal(r.ranges(t, "one\ntwo\n"), []string{"1-2"}) {
		t.Errorf("write_to_file: %+v", r.Metadata.IG)
	}
	clineGo(t, "PreToolUse read_file", e.send("PreToolUse-read_file", nil))
	clineGo(t, "PostToolUse read_file", e.send("PostToolUse-read_file", nil))
	clineGo(t, "PreToolUse replace_in_file", e.send("PreToolUse-replace_in_file", nil))
	e.write("src/app.txt", "one\nTWO\nthree\n")
	clineGo(t, "PostToolUse replace_in_file", e.send("PostToolUse-replace_in_file", nil))
	if r := e.lastRecord("src/app.txt"); r.Metadata.IG.Mutation != "modify" || !slices.Equal(r.ranges(t, "one\nTWO\nthree\n"), []string{"2-3"}) {
		t.Errorf("replace_in_file: %s %v", r.Metadata.IG.Mutation, r.ranges(t, ""))
	}
	if d := clineDenial(t, e.send("PreToolUse-write_to_file", map[string]any{"preToolUse.parameters.path": "../escape.txt"})); d.Code != "PATH_ESCAPE" {
		t.Errorf("write through ..: %+v", d)
	}
	if d := clineDenial(t, e.send("PreToolUse-write_to_file", map[string]any{"preToolUse.parameters.path": "docs/a.md"})); d.Code != "SCOPE_VIOLATION" {
		t.Errorf("write out of scope: %+v", d)
	}

	clineGo(t, "PreToolUse execute_command", e.send("PreToolUse-execute_command", nil))
	e.write("out.txt", "hi\n")
	a := clineGo(t, "PostToolUse execute_command", e.send("PostToolUse-execute_command", nil))
	if !strings.Contains(a.ContextModification, "out.txt: outside the owned_scope") {
		t.Errorf("PostToolUse execute_command: %+v, want the context to name out.txt", a)
	}

	out := e.run([]byte(`{"hookName":"PreToolUse","taskId":"t","preToolUse":{"toolName":"write_to_file","parameters":{"content":"x"}}}`))
	if d := clineDenial(t, out); d.Code != "HOOK_ERROR" || !strings.Contains(out.stderr, `"path"`) {
		t.Errorf("malformed: %+v, stderr %q", d, out.stderr)
	}
	if got := e.sessionIntent(clineSession); got != "INT-001" {
		t.Errorf("session intent %q", got)
	}
}
