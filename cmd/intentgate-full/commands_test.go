package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd constructs the command tree, runs args in this process and returns
// stdout, stderr and the error, as main would see them.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	root := newRoot(strings.NewReader(stdin), &out, &errw)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errw.String(), err
}

// cmdWorkspace is a workspace made by init, with intents and files.
func cmdWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	out, _, err := runCmd(t, "", "init", "-w", ws)
	if err != nil || !strings.Contains(out, "created "+filepath.Join(ws, ".orchestration", "active_intents.yaml")) {
		t.Fatalf("init: %v\n%s", err, out)
	}
	files[".orchestration/active_intents.yaml"] = e2eIntents
	for name, body := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// The reading commands, run in-process: flags, output and exit status.
func TestCommandsInProcess(t *testing.T) {
	t.Parallel()
	ws := cmdWorkspace(t, map[string]string{"src/a.go": "package a\n", "secrets/k": "k\n", ".intentignore": "secrets/\n"})

	out, _, err := runCmd(t, "", "init", "-w", ws)
	if err != nil || !strings.Contains(out, "kept    "+filepath.Join(ws, ".orchestration", "active_intents.yaml")+" (exists)") {
		t.Errorf("init again: %v\n%s", err, out)
	}

	out, _, err = runCmd(t, "", "intents", "list", "-w", ws)
	if err != nil || !strings.Contains(out, "INT-001") || !strings.Contains(out, "OWNED_SCOPE") {
		t.Errorf("intents list: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		path, says string
		code       int
	}{
		{"src/a.go", "INT-001: yes, through src/**", 0},
		{"src/../src/a.go", "", 1}, // a ".." segment is refused (PATH_ESCAPE)
		{"docs/x.md", "no, outside owned_scope", 1},
		{".orchestration/agent_trace.jsonl", "is a governance file", 1},
		{"secrets/k", "matches .intentignore", 1},
		{"../outside", "", 1},
	} {
		out, _, err := runCmd(t, "", "intents", "check", "-w", ws, tc.path)
		if exitCode(err) != tc.code && !(tc.code == 0 && err == nil) || !strings.Contains(out, tc.says) {
			t.Errorf("intents check %s: %v (exit %d), output %q; want exit %d and %q", tc.path, err, exitCode(err), out, tc.code, tc.says)
		}
	}

	out, errOut, err := runCmd(t, "", "intent", "use", "INT-001", "--session", "s1", "-w", ws)
	if err != nil || !strings.Contains(out, "session s1: active intent INT-001") || !strings.Contains(out, "<intent_context>") {
		t.Errorf("intent use: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := runCmd(t, "", "intent", "use", "INT-404", "--session", "s1", "-w", ws); err == nil || !strings.Contains(err.Error(), "UNKNOWN_INTENT") {
		t.Errorf("intent use of an undeclared intent: %v, want UNKNOWN_INTENT", err)
	}
	if _, _, err := runCmd(t, "", "intent", "use", "INT-001", "-w", ws); err == nil || !strings.Contains(err.Error(), "session") {
		t.Errorf("intent use without --session: %v, want the flag named", err)
	}

	out, _, err = runCmd(t, "", "session", "show", "s1", "-w", ws)
	if err != nil || !strings.Contains(out, "intent:   INT-001") || !strings.Contains(out, "select_active_intent") {
		t.Errorf("session show: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, "", "session", "show", "s1", "--json", "-w", ws)
	if err != nil || !strings.Contains(out, `"intent": "INT-001"`) && !strings.Contains(out, `"intent":"INT-001"`) {
		t.Errorf("session show --json: %v\n%s", err, out)
	}
	if _, _, err := runCmd(t, "", "session", "show", "nobody", "-w", ws); err == nil || !strings.Contains(err.Error(), `no session "nobody"`) {
		t.Errorf("session show of no session: %v", err)
	}

	out, _, err = runCmd(t, "", "tasks", "list", "-w", ws)
	if err != nil || !strings.Contains(out, "no tasks yet") {
		t.Errorf("tasks list: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, "", "tasks", "list", "--json", "-w", ws)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("tasks list --json: %v\n%s", err, out)
	}

	out, _, err = runCmd(t, "", "prompt", "--mode", "ask", "--format", "openai")
	if err != nil || !strings.Contains(out, `"read_file"`) || strings.Contains(out, `"write_to_file"`) {
		t.Errorf("prompt --mode ask --format openai: %v\n%.300s", err, out)
	}
	out, _, err = runCmd(t, "", "prompt", "-w", ws)
	if err != nil || !strings.Contains(out, "INT-001") {
		t.Errorf("prompt: %v\n%.300s", err, out)
	}
	if _, _, err := runCmd(t, "", "prompt", "--mode", "nope"); err == nil || !strings.Contains(err.Error(), `unknown mode "nope"`) {
		t.Errorf("prompt --mode nope: %v", err)
	}
	if _, _, err := runCmd(t, "", "prompt", "--format", "xml"); err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) {
		t.Errorf("prompt --format xml: %v", err)
	}

	if _, _, err := runCmd(t, "", "demo", "--dir", ws); err == nil || !strings.Contains(err.Error(), "does not exist yet") {
		t.Errorf("demo --dir of an existing directory: %v", err)
	}
	if _, _, err := runCmd(t, "", "exec", "--workspace", t.TempDir(), "--", "true"); exitCode(err) != 125 || !strings.Contains(err.Error(), "intentgate init") {
		t.Errorf("exec --workspace without .orchestration/: %v (exit %d), want 125 naming init", err, exitCode(err))
	}
	if _, _, err := runCmd(t, "", "task", "start", "--socket", "", "do it"); exitCode(err) != 2 || !strings.Contains(err.Error(), "--socket") {
		t.Errorf("task start without a socket: %v (exit %d), want 2", err, exitCode(err))
	}
	if _, _, err := runCmd(t, "", "task", "start", "--socket", "/nonexistent", "--auto-approve", "all-of-it", "do it"); exitCode(err) != 2 {
		t.Errorf("task start --auto-approve all-of-it: %v (exit %d), want 2", err, exitCode(err))
	}
	if _, _, err := runCmd(t, "", "run"); exitCode(err) != 2 {
		t.Errorf("run without a task: %v (exit %d), want 2", err, exitCode(err))
	}
}
