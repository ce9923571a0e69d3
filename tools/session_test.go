package tools

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// testModes are the built-in modes, as the session tools see them.
type testModes struct{}

func (testModes) ModeName(slug string) (string, bool) {
	names := map[string]string{"code": "Code", "architect": "Architect", "ask": "Ask", "debug": "Debug", "orchestrator": "Orchestrator"}
	n, ok := names[slug]
	return n, ok
}
func (testModes) ModeSlugs() []string {
	return []string{"code", "architect", "ask", "debug", "orchestrator"}
}
func (testModes) DefaultMode() string { return "code" }

func TestParseChecklist(t *testing.T) {
	got := ParseChecklist("# Plan\n[x] read\n- [-] write tests\n  [ ]   ship it  \n[~] also doing\n[X] Done\nnot an item\n[ ]\n[?] unknown\n")
	want := []orchestration.Todo{
		{Content: "read", Status: "completed"},
		{Content: "write tests", Status: "in_progress"},
		{Content: "ship it", Status: "pending"},
		{Content: "also doing", Status: "in_progress"},
		{Content: "Done", Status: "completed"},
	}
	if len(got) != len(want) {
		t.Fatalf("ParseChecklist = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Content != want[i].Content || got[i].Status != want[i].Status || len(got[i].ID) != 32 {
			t.Errorf("item %d = %+v, want %+v with an md5 id", i, got[i], want[i])
		}
	}
	// Roo Code's ids: md5(content + status).
	if got[0].ID != "a58a429cba477cb53b330d028a316216" {
		t.Errorf("id %q is not md5(content+status)", got[0].ID)
	}
	if md := TodoMarkdown(got); md != "[x] read\n[-] write tests\n[ ] ship it\n[-] also doing\n[x] Done" {
		t.Errorf("TodoMarkdown = %q", md)
	}
}

func TestSessionTools(t *testing.T) {
	ws := rtWorkspace(t, nil)
	for _, tc := range []struct {
		name   string
		tool   engine.Tool
		args   map[string]any
		mode   string // the session's current mode
		key    string
		data   any
		output string
	}{
		{"update_todo_list", UpdateTodoList(), map[string]any{"todos": "[x] a\n[ ] b"}, "", "todos",
			[]orchestration.Todo{{ID: todoID(orchestration.Todo{Content: "a", Status: "completed"}), Content: "a", Status: "completed"},
				{ID: todoID(orchestration.Todo{Content: "b", Status: "pending"}), Content: "b", Status: "pending"}},
			"Todo list updated successfully.\n\n[x] a\n[ ] b"},
		{"update_todo_list as JSON", UpdateTodoList(), map[string]any{"todos": []any{map[string]any{"content": "a", "status": "in_progress"}, "b"}}, "", "todos",
			[]orchestration.Todo{{ID: todoID(orchestration.Todo{Content: "a", Status: "in_progress"}), Content: "a", Status: "in_progress"},
				{ID: todoID(orchestration.Todo{Content: "b", Status: "pending"}), Content: "b", Status: "pending"}},
			"Todo list updated successfully.\n\n[-] a\n[ ] b"},
		{"update_todo_list emptied", UpdateTodoList(), map[string]any{"todos": ""}, "", "todos", []orchestration.Todo{}, "Todo list updated successfully."},
		{"switch_mode", SwitchMode(testModes{}), map[string]any{"mode_slug": "architect", "reason": "plan first"}, "", "mode", "architect",
			"Successfully switched from Code mode to Architect mode because: plan first."},
		{"switch_mode from ask", SwitchMode(testModes{}), map[string]any{"mode_slug": "code", "reason": "to build"}, "ask", "mode", "code",
			"Successfully switched from Ask mode to Code mode because: to build."},
		{"ask_followup_question", AskFollowupQuestion(), map[string]any{"question": "Which?", "follow_up": []any{
			map[string]any{"text": "first", "mode": "code"}, map[string]any{"text": "second", "mode": nil}, "third"}}, "", "question",
			orchestration.Question{CallID: "c1", Text: "Which?", Suggestions: []orchestration.Suggestion{{Text: "first", Mode: "code"}, {Text: "second"}, {Text: "third"}}}, ""},
		{"ask_followup_question, older XML suggestions", AskFollowupQuestion(), map[string]any{"question": "Go?",
			"follow_up": "<suggest>Yes</suggest>\n<suggest mode=\"architect\">Plan it</suggest>"}, "", "question",
			orchestration.Question{CallID: "c1", Text: "Go?", Suggestions: []orchestration.Suggestion{{Text: "Yes"}, {Text: "Plan it", Mode: "architect"}}}, ""},
		{"attempt_completion", AttemptCompletion(), map[string]any{"result": "All done."}, "", "completion",
			orchestration.Completion{CallID: "c1", Result: "All done."}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.args)
			c := &engine.Call{ID: "c1", Session: "s1", Tool: tc.name, Args: raw, WS: ws, Mode: tc.mode}
			r, err := tc.tool.Run(t.Context(), c)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !reflect.DeepEqual(r.Data[tc.key], tc.data) {
				t.Errorf("data[%s] = %#v, want %#v", tc.key, r.Data[tc.key], tc.data)
			}
			if tc.output != "" && r.Output != tc.output {
				t.Errorf("output = %q, want %q", r.Output, tc.output)
			}
			if len(r.Changes) != 0 || len(r.Reads) != 0 {
				t.Errorf("a session tool touched files: %+v", r)
			}
		})
	}
}

func TestNewTask(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"mode": "debug", "message": `find it \\@here`, "todos": "[ ] look\n[ ] fix"})
	r, err := NewTask(testModes{}).Run(t.Context(), &engine.Call{ID: "c", Session: "s", Tool: "new_task", Args: raw})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := r.Data["task"].(orchestration.Task)
	if !ok || !strings.HasPrefix(task.ID, "task-") || task.Mode != "debug" || task.Message != `find it \@here` || len(task.Todos) != 2 {
		t.Fatalf("task = %#v", r.Data["task"])
	}
	if !strings.Contains(r.Output, task.ID) || !strings.Contains(r.Output, "Debug mode") {
		t.Errorf("output = %q", r.Output)
	}
	for _, args := range []map[string]any{
		{"mode_slug": "code", "message": "m", "todos": ""},
		{"mode": "code", "message": "m", "todos": nil},
	} {
		raw, _ := json.Marshal(args)
		if _, err := NewTask(testModes{}).Run(t.Context(), &engine.Call{Session: "s", Tool: "new_task", Args: raw}); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func TestSessionToolsRefuse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tool    engine.Tool
		args    map[string]any
		mode    string
		session string
		code    engine.Code
		param   string
	}{
		{"question without question", AskFollowupQuestion(), map[string]any{"follow_up": []string{"a"}}, "", "s", engine.MissingParameter, "question"},
		{"question without follow_up", AskFollowupQuestion(), map[string]any{"question": "q"}, "", "s", engine.MissingParameter, "follow_up"},
		{"question with empty follow_up", AskFollowupQuestion(), map[string]any{"question": "q", "follow_up": []string{}}, "", "s", engine.InvalidArgument, "follow_up"},
		{"question with a number", AskFollowupQuestion(), map[string]any{"question": "q", "follow_up": 3}, "", "s", engine.InvalidArgument, "follow_up"},
		{"completion without result", AttemptCompletion(), map[string]any{}, "", "s", engine.MissingParameter, "result"},
		{"switch without slug", SwitchMode(testModes{}), map[string]any{"reason": "r"}, "", "s", engine.MissingParameter, "mode_slug"},
		{"switch without reason", SwitchMode(testModes{}), map[string]any{"mode_slug": "ask"}, "", "s", engine.MissingParameter, "reason"},
		{"switch to no mode", SwitchMode(testModes{}), map[string]any{"mode_slug": "poet", "reason": "r"}, "", "s", engine.InvalidArgument, "mode_slug"},
		{"switch without a session", SwitchMode(testModes{}), map[string]any{"mode_slug": "ask", "reason": "r"}, "", "", engine.MissingParameter, "session"},
		{"task without mode", NewTask(testModes{}), map[string]any{"message": "m", "todos": ""}, "", "s", engine.MissingParameter, "mode"},
		{"task without message", NewTask(testModes{}), map[string]any{"mode": "code", "todos": ""}, "", "s", engine.MissingParameter, "message"},
		{"task without todos", NewTask(testModes{}), map[string]any{"mode": "code", "message": "m"}, "", "s", engine.MissingParameter, "todos"},
		{"task in no mode", NewTask(testModes{}), map[string]any{"mode": "poet", "message": "m", "todos": ""}, "", "s", engine.InvalidArgument, "mode"},
		{"todos missing", UpdateTodoList(), map[string]any{}, "", "s", engine.MissingParameter, "todos"},
		{"todos of numbers", UpdateTodoList(), map[string]any{"todos": []int{1}}, "", "s", engine.InvalidArgument, "todos"},
		{"todos with a bad status", UpdateTodoList(), map[string]any{"todos": []any{map[string]any{"content": "a", "status": "done"}}}, "", "s", engine.InvalidArgument, "todos"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.args)
			_, err := tc.tool.Run(t.Context(), &engine.Call{ID: "c", Session: tc.session, Tool: "x", Args: raw, Mode: tc.mode})
			d, ok := engine.AsDenial(err)
			if !ok || d.Code != tc.code || d.Parameter != tc.param {
				t.Errorf("err = %v, want %s naming %q", err, tc.code, tc.param)
			}
		})
	}
	raw, _ := json.Marshal(map[string]any{"mode_slug": "ask", "reason": "r"})
	_, err := SwitchMode(testModes{}).Run(t.Context(), &engine.Call{Session: "s", Tool: "switch_mode", Args: raw, Mode: "ask"})
	if err == nil || rtCode(err) != "" || !strings.Contains(err.Error(), "already in Ask mode") {
		t.Errorf("switching to the current mode: %v", err)
	}
	if !slices.Contains(testModes{}.ModeSlugs(), testModes{}.DefaultMode()) {
		t.Error("the default mode is not a mode")
	}
}
