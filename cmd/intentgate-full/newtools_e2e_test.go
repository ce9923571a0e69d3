package main

import (
	"strings"
	"testing"
)

// The tools of the Roo tool layer's second half, through intentgate
// dispatch and so through the governed runtime, with hostile arguments.
func TestNewToolsThroughDispatch(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{
		"src/auth.go": "package src\n\n// CheckPassword compares a password with its hash.\nfunc CheckPassword(h, p string) bool { return h == p }\n",
		"src/b.txt":   "b\n",
	})
	s := startDispatch(t, ws, "new-tools")

	r := toolsOK(t, s, "read_file", map[string]any{"files": []any{
		map[string]any{"path": "src/auth.go", "line_ranges": []string{"3-4"}},
		map[string]any{"path": "src/b.txt"}}})
	if !strings.HasPrefix(r.Output, "<files>\n<file><path>src/auth.go</path>\n<content lines=\"3-4\">\n3 | // CheckPassword") ||
		!strings.Contains(r.Output, "<file><path>src/b.txt</path>\n<content lines=\"1-1\">\n1 | b\n</content>\n</file>") {
		t.Errorf("read_file files = %q", r.Output)
	}
	if r := toolsCall(s, "read_file", map[string]any{"args": "<file><path>src/b.txt</path></file><file><path>../../etc/passwd</path></file>"}); r.code() != "PATH_ESCAPE" {
		t.Errorf("read_file args escaping: %+v", r)
	}
	r = toolsOK(t, s, "codebase_search", map[string]any{"query": "check password"})
	if !strings.HasPrefix(r.Output, "Query: check password\nResults:\nFile path: src/auth.go\n") {
		t.Errorf("codebase_search = %q", r.Output)
	}
	if r := toolsCall(s, "codebase_search", map[string]any{"query": "x", "path": "../"}); r.code() != "PATH_ESCAPE" {
		t.Errorf("codebase_search path ../: %+v", r)
	}
	r = toolsOK(t, s, "fetch_instructions", map[string]any{"task": "create_mode"})
	if !strings.Contains(r.Output, ".orchestration/modes.yaml") {
		t.Errorf("fetch_instructions = %q", r.Output)
	}
	for _, u := range []string{"file:///etc/passwd", "https://example.com/", "http://localhost@example.com/"} {
		if r := toolsCall(s, "browser_action", map[string]any{"action": "launch", "url": u}); r.code() != "INVALID_ARGUMENT" || r.Denial.Param != "url" {
			t.Errorf("browser_action launch %s: %+v", u, r)
		}
	}
	r = toolsOK(t, s, "browser_action", map[string]any{"action": "close"})
	if r.Output != "The browser has been closed. You may now proceed to using other tools." {
		t.Errorf("close = %q", r.Output)
	}
}
