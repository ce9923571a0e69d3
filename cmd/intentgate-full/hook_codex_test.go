package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const codexSession = "019a7c1e-5b2f-7d10-9a3c-codex0000001"

// codexValid checks stdout against what Codex accepts for event
// (testdata/hooks/codex/<event>.output.schema.json). Nothing printed is
// always valid: it means no opinion.
func codexValid(t *testing.T, event string, out hookOut) map[string]any {
	t.Helper()
	if out.code != 0 {
		t.Fatalf("%s: exit %d, stderr %q", event, out.code, out.stderr)
	}
	if out.stdout == "" {
		return nil
	}
	if err := codexSchemaCheck(t, event, out.stdout); err != nil {
		t.Fatalf("%s: Codex would reject %s:\n%v", event, out.stdout, err)
	}
	return decodeObject(t, out.stdout)
}

func codexSchemaCheck(t *testing.T, event, stdout string) error {
	t.Helper()
	path := filepath.Join("testdata", "hooks", "codex", event+".output.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// The schemas hold what Codex refuses, so a pass above means something.
func TestCodexSchemasRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ event, stdout string }{
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":" "}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x","extra":1}}`},
		{"PreToolUse", `{"permission":"deny"}`},
		{"PostToolUse", `{"decision":"block"}`},
		{"PostToolUse", `{"reason":"why"}`},
		{"SessionStart", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}`},
	} {
		if codexSchemaCheck(t, tc.event, tc.stdout) == nil {
			t.Errorf("%s schema accepts %s", tc.event, tc.stdout)
		}
	}
}

func codexDenial(t *testing.T, out hookOut) denialOut {
	t.Helper()
	m := codexValid(t, "PreToolUse", out)
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if hso["permissionDecision"] != "deny" {
		t.Fatalf("stdout %q, want a deny", out.stdout)
	}
	return decodeDenial(t, hso["permissionDecisionReason"].(string))
}

func TestCodexContract(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "codex", map[string]string{"README.md": "readme\n"})

	m := codexValid(t, "SessionStart", e.send("SessionStart", nil))
	if ctx := m["hookSpecificOutput"].(map[string]any)["additionalContext"].(string); !strings.Contains(ctx, "INTENT PROTOCOL") {
		t.Errorf("SessionStart context %q", ctx)
	}
	if d := codexDenial(t, e.send("PreToolUse-apply_patch-add", nil)); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("apply_patch before any intent: %+v", d)
	}
	m = codexValid(t, "UserPromptSubmit", e.send("UserPromptSubmit", nil))
	if ctx := m["hookSpecificOutput"].(map[string]any)["additionalContext"].(string); !strings.Contains(ctx, "<intent_context>") {
		t.Errorf("@INT-001 context %q", ctx)
	}

	// Allowed: nothing printed (Codex takes no "allow" without updatedInput).
	if out := e.send("PreToolUse-apply_patch-add", nil); out.stdout != "" {
		t.Errorf("allowed apply_patch printed %q", out.stdout)
	}
	e.write("src/hello.txt", "hello\nworld\n")
	codexValid(t, "PostToolUse", e.send("PostToolUse-apply_patch-add", nil))
	if r := e.lastRecord("src/hello.txt"); r.Metadata.IG.Mutation != "create" || !slices.Equal(r.ranges(t, "hello\nworld\n"), []string{"1-2"}) {
		t.Errorf("add: %+v", r.Metadata.IG)
	}
	// Its own write is the session's baseline: the update may follow.
	if out := e.send("PreToolUse-apply_patch-update", nil); out.stdout != "" {
		t.Errorf("allowed update printed %q", out.stdout)
	}
	e.write("src/hello.txt", "hello\nthere\nagain\n")
	codexValid(t, "PostToolUse", e.send("PostToolUse-apply_patch-update", nil))
	if r := e.lastRecord("src/hello.txt"); r.Metadata.IG.Mutation != "modify" || !slices.Equal(r.ranges(t, "hello\nthere\nagain\n"), []string{"2-3"}) {
		t.Errorf("update: %s %v", r.Metadata.IG.Mutation, r.ranges(t, ""))
	}

	// One file of a patch out of scope refuses the whole patch.
	patch := "*** Begin Patch\n*** Add File: src/ok.txt\n+ok\n*** Add File: lib/no.txt\n+no\n*** End Patch\n"
	if d := codexDenial(t, e.send("PreToolUse-apply_patch-add", map[string]any{"tool_input.command": patch})); d.Code != "SCOPE_VIOLATION" || d.Path != "lib/no.txt" {
		t.Errorf("patch touching lib/no.txt: %+v", d)
	}
	// Codex reads through the shell, which sets no baseline: an update of a
	// file this session never wrote is NOT_READ.
	patch = "*** Begin Patch\n*** Update File: README.md\n@@\n-readme\n+README\n*** End Patch\n"
	if d := codexDenial(t, e.send("PreToolUse-apply_patch-update", map[string]any{"tool_input.command": patch})); d.Code != "NOT_READ" {
		t.Errorf("update of an unread file: %+v", d)
	}

	codexRewritten(t, "allowed Bash", e.send("PreToolUse-Bash", nil))
	e.write("out.txt", "hi\n")
	m = codexValid(t, "PostToolUse", e.send("PostToolUse-Bash", nil))
	if m["decision"] != "block" || !strings.Contains(m["reason"].(string), "out.txt") {
		t.Errorf("Bash writing out of scope: %v", m)
	}

	out := e.run([]byte(`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"no patch here"}}`))
	if d := codexDenial(t, out); d.Code != "HOOK_ERROR" || !strings.Contains(out.stderr, "Begin Patch") {
		t.Errorf("malformed patch: %+v, stderr %q", d, out.stderr)
	}
	if d := codexDenial(t, e.run([]byte("{"))); d.Code != "HOOK_ERROR" {
		t.Errorf("truncated JSON: %+v", d)
	}
	if got := e.sessionIntent(codexSession); got != "INT-001" {
		t.Errorf("session intent %q", got)
	}
}
