package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
)

// modeEnv is a workspace governed by every policy, opened with gate.Open as
// every front door opens one.
type modeEnv struct {
	t        *testing.T
	dir      string
	rt       *gate.Runtime
	sessions *orchestration.SessionStore
}

func newModeEnv(t *testing.T, files map[string]string) *modeEnv {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{".orchestration/active_intents.yaml": intentsYAML,
		"src/a.go": "package a\n", "docs/plan.md": "# plan\n"}
	for k, v := range files {
		all[k] = v
	}
	for name, body := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt := openRuntime(t, dir)
	return &modeEnv{t: t, dir: dir, rt: rt, sessions: rt.Stores().Sessions}
}

func (e *modeEnv) call(session, tool string, args map[string]any) (*engine.Result, error) {
	raw, _ := json.Marshal(args)
	return e.rt.Dispatch(context.Background(), &engine.Call{ID: "c", Session: session, Tool: tool, Args: raw})
}

func (e *modeEnv) must(session, tool string, args map[string]any) *engine.Result {
	e.t.Helper()
	r, err := e.call(session, tool, args)
	if err != nil {
		e.t.Fatalf("%s %v: %v", tool, args, err)
	}
	return r
}

func (e *modeEnv) session(id string) *orchestration.Session {
	e.t.Helper()
	s, err := e.sessions.Load(id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func TestModePolicy(t *testing.T) {
	for _, tc := range []struct {
		mode string
		tool string
		args map[string]any
		code engine.Code // "" when allowed
		says []string    // fragments of the denial's message
	}{
		{"", "write_to_file", map[string]any{"path": "src/new.go", "content": "x"}, "", nil},
		{"code", "execute_command", map[string]any{"command": "true"}, "", nil},
		{"architect", "write_to_file", map[string]any{"path": "src/notes.md", "content": "x"}, "", nil},
		{"architect", "write_to_file", map[string]any{"path": "src/new.go", "content": "x"}, engine.ToolNotAllowed,
			[]string{"Architect mode (architect)", `\.md$ (Markdown files only)`, "src/new.go does not match"}},
		{"architect", "execute_command", map[string]any{"command": "true"}, engine.ToolNotAllowed,
			[]string{"execute_command (group command)", "Architect mode (architect)", `edit (files matching \.md$: Markdown files only)`}},
		{"ask", "read_file", map[string]any{"path": "src/a.go"}, "", nil},
		{"ask", "write_to_file", map[string]any{"path": "docs/new.md", "content": "x"}, engine.ToolNotAllowed,
			[]string{"group edit", "Ask mode (ask)", "the groups read, browser, mcp"}},
		{"orchestrator", "read_file", map[string]any{"path": "src/a.go"}, engine.ToolNotAllowed,
			[]string{"Orchestrator mode (orchestrator)", "only the tools every mode has"}},
		{"orchestrator", "update_todo_list", map[string]any{"todos": "[ ] a"}, "", nil},
		{"orchestrator", hooks.SelectTool, map[string]any{"intent_id": "INT-001"}, "", nil},
		{"debug", "write_to_file", map[string]any{"path": "src/new.go", "content": "x"}, "", nil},
		{"poet", "read_file", map[string]any{"path": "src/a.go"}, engine.ToolNotAllowed, []string{`mode "poet", which is not defined`}},
		{"architect", "frobnicate", map[string]any{}, engine.ToolNotAllowed, []string{"not a tool intentgate knows"}},
		{"code", "frobnicate", map[string]any{}, engine.InvalidArgument, []string{"unknown tool"}},
	} {
		t.Run(tc.mode+"/"+tc.tool, func(t *testing.T) {
			e := newModeEnv(t, nil)
			e.must("s", hooks.SelectTool, map[string]any{"intent_id": "INT-001"})
			if tc.mode != "" {
				if _, err := e.sessions.Update("s", func(s *orchestration.Session) error { s.Mode = tc.mode; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.call("s", tc.tool, tc.args)
			d, denied := engine.AsDenial(err)
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code != "" && (!denied || d.Code != tc.code):
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			for _, s := range tc.says {
				if !strings.Contains(d.Message, s) {
					t.Errorf("message %q lacks %q", d.Message, s)
				}
			}
		})
	}
}

func TestCustomModes(t *testing.T) {
	e := newModeEnv(t, map[string]string{".orchestration/modes.yaml": `customModes:
  - slug: tester
    name: Tester
    groups:
      - read
      - command
      - - edit
        - fileRegex: _test\.go$
          description: tests only
`})
	e.must("s", hooks.SelectTool, map[string]any{"intent_id": "INT-001"})
	r := e.must("s", "switch_mode", map[string]any{"mode_slug": "tester", "reason": "write tests"})
	if r.Output != "Successfully switched from Code mode to Tester mode because: write tests." {
		t.Errorf("output = %q", r.Output)
	}
	if got := e.session("s").Mode; got != "tester" {
		t.Fatalf("session mode = %q", got)
	}
	e.must("s", "write_to_file", map[string]any{"path": "src/a_test.go", "content": "package a\n"})
	_, err := e.call("s", "write_to_file", map[string]any{"path": "src/b.go", "content": "package a\n"})
	if d, ok := engine.AsDenial(err); !ok || d.Code != engine.ToolNotAllowed || !strings.Contains(d.Message, `_test\.go$ (tests only)`) {
		t.Errorf("err = %v, want TOOL_NOT_ALLOWED naming the pattern", err)
	}
	if _, err := e.call("s", "switch_mode", map[string]any{"mode_slug": "tester", "reason": "again"}); err == nil {
		t.Error("switching to the mode the session is in succeeded")
	}
}

func TestBrokenModesFileFailsClosed(t *testing.T) {
	e := newModeEnv(t, map[string]string{".orchestration/modes.yaml": "customModes:\n  - slug: x\n    name: X\n    groups: [reed]\n"})
	_, err := e.call("s", "read_file", map[string]any{"path": "src/a.go"})
	d, ok := engine.AsDenial(err)
	if !ok || d.Code != engine.HookError || !strings.Contains(d.Message, `modes.yaml:4:14: unknown group "reed"`) {
		t.Fatalf("err = %v, want HOOK_ERROR naming file:line:col", err)
	}
	// The tools every mode has are not judged by the modes.
	e.must("s", "update_todo_list", map[string]any{"todos": "[ ] fix modes.yaml"})
}

func TestSessionEffectsAndUsage(t *testing.T) {
	e := newModeEnv(t, nil)
	e.must("s", hooks.SelectTool, map[string]any{"intent_id": "INT-001"})
	e.must("s", "update_todo_list", map[string]any{"todos": "[x] plan\n[-] build\n[ ] ship"})
	e.must("s", "ask_followup_question", map[string]any{"question": "Ship it?",
		"follow_up": []map[string]any{{"text": "yes", "mode": "code"}, {"text": "no"}}})
	e.must("s", "new_task", map[string]any{"mode": "ask", "message": "explain", "todos": "[ ] read"})
	e.must("s", "attempt_completion", map[string]any{"result": "shipped"})
	e.must("s", "switch_mode", map[string]any{"mode_slug": "ask", "reason": "questions"})
	if _, err := e.call("s", "write_to_file", map[string]any{"path": "src/a.go", "content": "x"}); err == nil {
		t.Fatal("ask mode wrote a file")
	}
	if _, err := e.call("s", "read_file", map[string]any{"path": "src/missing.go"}); err == nil {
		t.Fatal("read a missing file")
	}
	e.must("s", "read_file", map[string]any{"path": "src/a.go"})

	s := e.session("s")
	todos, err := s.TodoList()
	if err != nil || len(todos) != 3 || todos[1] != (orchestration.Todo{ID: todos[1].ID, Content: "build", Status: "in_progress"}) {
		t.Errorf("todos = %+v, %v", todos, err)
	}
	if q := s.Question; q == nil || q.Text != "Ship it?" || len(q.Suggestions) != 2 || q.Suggestions[0].Mode != "code" || q.Asked.IsZero() {
		t.Errorf("question = %+v", q)
	}
	if c := s.Completion; c == nil || c.Result != "shipped" || c.At.IsZero() {
		t.Errorf("completion = %+v", c)
	}
	if len(s.Tasks) != 1 || s.Tasks[0].Mode != "ask" || s.Tasks[0].Message != "explain" || len(s.Tasks[0].Todos) != 1 {
		t.Errorf("tasks = %+v", s.Tasks)
	}
	if s.Mode != "ask" {
		t.Errorf("mode = %q", s.Mode)
	}
	want := map[string]orchestration.ToolUsage{
		hooks.SelectTool:        {Attempts: 1},
		"update_todo_list":      {Attempts: 1},
		"ask_followup_question": {Attempts: 1},
		"new_task":              {Attempts: 1},
		"attempt_completion":    {Attempts: 1},
		"switch_mode":           {Attempts: 1},
		"write_to_file":         {Attempts: 1, Failures: 1}, // refused
		"read_file":             {Attempts: 2, Failures: 1}, // the tool failed once
	}
	if len(s.Usage) != len(want) {
		t.Errorf("usage = %+v", s.Usage)
	}
	for tool, u := range want {
		if s.Usage[tool] != u {
			t.Errorf("usage[%s] = %+v, want %+v", tool, s.Usage[tool], u)
		}
	}
}

func TestUsageBoundsToolNames(t *testing.T) {
	e := newModeEnv(t, nil)
	long := strings.Repeat("x", 200)
	if _, err := e.call("s", long, nil); err == nil {
		t.Fatal("an unknown tool ran")
	}
	if u := e.session("s").Usage; u["(other)"].Failures != 1 || len(u) != 1 {
		t.Errorf("usage = %+v", u)
	}
}
