package agent

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/catalog"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// journal records what happened to the calls, in order.
type journal struct {
	mu    sync.Mutex
	steps []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.steps = append(j.steps, s)
	j.mu.Unlock()
}

func (j *journal) count(s string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, x := range j.steps {
		if x == s {
			n++
		}
	}
	return n
}

// countingEngine is a real engine whose pre-hook refuses writes under
// secret/ and counts its runs, with a write tool and a post-hook that only
// record that they ran.
func countingEngine(j *journal) *engine.Engine {
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: "write_to_file", Group: engine.GroupEdit, Tool: engine.ToolFunc(func(_ context.Context, c *engine.Call) (*engine.Result, error) {
		j.add("tool " + c.ID)
		return &engine.Result{Output: "written"}, nil
	})})
	reg.Register(engine.Spec{Name: "attempt_completion", Group: engine.GroupModes, Tool: engine.ToolFunc(func(context.Context, *engine.Call) (*engine.Result, error) {
		return &engine.Result{}, nil
	})})
	e := engine.New(reg)
	e.Use(engine.PreFunc(func(_ context.Context, c *engine.Call) error {
		j.add("pre " + c.ID)
		var a struct{ Path string }
		_ = json.Unmarshal(c.Args, &a)
		if strings.HasPrefix(a.Path, "secret/") {
			return &engine.Denial{Code: engine.ScopeViolation, Tool: c.Tool, Path: a.Path, Message: "outside the intent's scope"}
		}
		return nil
	}))
	e.After(engine.PostFunc(func(_ context.Context, c *engine.Call, _ *engine.Result) error {
		j.add("post " + c.ID)
		return nil
	}))
	return e
}

func writeCall(id, path string) fakemodel.Call {
	b, _ := json.Marshal(map[string]string{"path": path, "content": "x\n"})
	return fakemodel.Call{ID: id, Name: "write_to_file", Args: string(b)}
}

// TestPreHooksRunOnceAroundApproval: a call put to the person passes the
// pre-hooks once, then the approval, then the tool and the post-hooks; a
// refused call is never offered; a rejected one never runs.
func TestPreHooksRunOnceAroundApproval(t *testing.T) {
	j := &journal{}
	u := fakemodel.Usage{Input: 10, Output: 1}
	fake := fakemodel.New(
		fakemodel.Turn{Usage: u, Calls: []fakemodel.Call{writeCall("w1", "app/a.txt")}},
		fakemodel.Turn{Usage: u, Calls: []fakemodel.Call{writeCall("w2", "secret/b.txt")}},
		fakemodel.Turn{Usage: u, Calls: []fakemodel.Call{writeCall("w3", "app/c.txt")}},
		fakemodel.Turn{Usage: u, Calls: []fakemodel.Call{{ID: "done", Name: "attempt_completion", Args: `{"result":"ok"}`}}},
	)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	answers := []Answer{{Response: YesButtonClicked}, {Response: NoButtonClicked, Text: "not c"}, {Response: YesButtonClicked}}
	var task *Task
	task = New("write files", Options{
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL}), Model: "claude-sonnet-4-5",
		Runtime: countingEngine(j), Workspace: t.TempDir(), RetryDelay: 1,
		System: func(string) string { return "system" },
		Tools:  func(string) []provider.Tool { return nil },
		OnEvent: func(e Event) {
			if e.Name == EventMessage && e.Message.Type == TypeAsk && !e.Message.IsPartial() {
				var path string
				var st SayTool
				if json.Unmarshal([]byte(e.Message.Text), &st) == nil {
					path = st.Path
				}
				j.add("ask " + string(e.Message.Ask) + " " + path)
			}
			if e.Name == EventWaitingForInput {
				a := answers[0]
				answers = answers[1:]
				go task.Respond(a)
			}
		},
	})
	res, err := task.Run(context.Background())
	if err != nil || res.Outcome != Completed {
		t.Fatalf("run: %v %+v", err, res)
	}
	want := []string{
		"pre w1", "ask tool app/a.txt", "tool w1", "post w1",
		"pre w2",                       // refused: never asked, never run
		"pre w3", "ask tool app/c.txt", // rejected: never run
		"pre done", "post done", "ask completion_result ",
	}
	if strings.Join(j.steps, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(j.steps, "\n"), strings.Join(want, "\n"))
	}
	for _, id := range []string{"w1", "w2", "w3", "done"} {
		if n := j.count("pre " + id); n != 1 {
			t.Errorf("pre-hooks ran %d times for %s, want once", n, id)
		}
	}
	// What the model was told: the refusal JSON, then the rejection with
	// the person's feedback.
	reqs := fake.Requests()
	if got := lastToolResult(t, reqs[2]); !strings.Contains(got, "SCOPE_VIOLATION") {
		t.Errorf("the model got %q for the refused call", got)
	}
	if got := lastToolResult(t, reqs[3]); !strings.Contains(got, "The user denied this operation.") || !strings.Contains(got, "not c") {
		t.Errorf("the model got %q for the rejected call", got)
	}
}

func lastToolResult(t *testing.T, rq fakemodel.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Content []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(rq.Body, &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	for _, b := range last.Content {
		if b.Type == "tool_result" {
			return string(b.Content)
		}
	}
	return ""
}

// The auto-approval groups and the usage report are read off the tool
// catalog: every declared tool is approved by its catalog group (new_task by
// subtasks), and its usage is the reference's unless the tool is intentgate's
// own.
func TestToolTablesFollowTheCatalog(t *testing.T) {
	want := map[string]string{
		"select_active_intent": GroupRead, "read_file": GroupRead, "list_files": GroupRead,
		"search_files": GroupRead, "list_code_definition_names": GroupRead, "codebase_search": GroupRead,
		"fetch_instructions": GroupRead, "write_to_file": GroupEdit, "apply_diff": GroupEdit,
		"insert_content": GroupEdit, "search_and_replace": GroupEdit, "execute_command": GroupCommand,
		"browser_action": GroupBrowser, "use_mcp_tool": GroupMCP, "access_mcp_resource": GroupMCP,
		"switch_mode": GroupModes, "update_todo_list": GroupModes, "new_task": GroupSubtasks,
		"ask_followup_question": GroupModes, "attempt_completion": GroupModes,
	}
	tools := catalog.Tools()
	if len(tools) != len(want) {
		t.Errorf("the catalog declares %d tools, this test knows %d: add the new one here", len(tools), len(want))
	}
	u := ToolUsage{}
	for _, tl := range tools {
		if g := approvalGroup(tl.Name); g != want[tl.Name] {
			t.Errorf("approvalGroup(%q) = %q, want %q", tl.Name, g, want[tl.Name])
		}
		u.attempt(tl.Name)
	}
	for _, unknown := range []string{"", "generate_image", "rm_rf", "READ_FILE"} {
		if g := approvalGroup(unknown); g != "" {
			t.Errorf("approvalGroup(%q) = %q, want none (ask the person)", unknown, g)
		}
	}
	u.attempt("not_a_tool")
	roo, own := u.Split()
	if len(own) != 2 || own["select_active_intent"] == nil || own["not_a_tool"] == nil {
		t.Errorf("own usage = %v, want select_active_intent and not_a_tool", keys(own))
	}
	if len(roo) != len(want)-1 || roo["select_active_intent"] != nil {
		t.Errorf("reference usage = %v, want every declared tool but select_active_intent", keys(roo))
	}
	if got := ReferenceTools(); len(got) != len(roo) {
		t.Errorf("ReferenceTools() = %v, want the %d tools of the reference usage", got, len(roo))
	}
}

func keys(u ToolUsage) []string {
	var out []string
	for k := range u {
		out = append(out, k)
	}
	return out
}
