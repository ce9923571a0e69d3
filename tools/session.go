package tools

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// The session tools change nothing in the workspace. What they decide (a
// mode switch, a todo list, a question for the user, a completion, a
// delegated task) goes into Result.Data under the orchestration.Effect keys,
// as values of the session's own types (orchestration.Todo, Question,
// Completion, Task); the mode policy records them in the session, and a
// front door shows them to whoever drives the session.

// Modes is what the session tools need of the modes in force.
type Modes interface {
	// ModeName returns the display name of the mode with the given slug.
	ModeName(slug string) (name string, ok bool)
	// ModeSlugs returns the slugs of all modes, for messages.
	ModeSlugs() []string
	// DefaultMode is the mode of a session that has chosen none.
	DefaultMode() string
}

func needSession(c *engine.Call) error {
	if c.Session != "" {
		return nil
	}
	return &engine.Denial{Code: engine.MissingParameter, Parameter: "session",
		Message: c.Tool + " needs a session id to record what it decides",
		Hint:    "send a session id with every call"}
}

// AskFollowupQuestion is ask_followup_question(question, follow_up): it
// records a question for the user, with 1 to 4 suggested answers, each of
// which may switch the session to a mode. follow_up is a list of
// {"text", "mode"} objects or of strings, or in the older format a string
// of <suggest> elements (<suggest mode="code">Yes</suggest>).
func AskFollowupQuestion() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		question, err := c.Require("question")
		if err != nil {
			return nil, err
		}
		raw, err := c.Arg("follow_up")
		if err != nil {
			return nil, err
		}
		if raw == nil {
			_, err := c.Require("follow_up")
			return nil, err
		}
		sugs, err := parseSuggestions(raw)
		if err != nil {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "follow_up",
				Message: "follow_up: " + err.Error(),
				Hint:    `send follow_up as a list such as [{"text":"Yes, go ahead","mode":"code"},{"text":"No"}]`}
		}
		if err := needSession(c); err != nil {
			return nil, err
		}
		q := orchestration.Question{CallID: c.ID, Text: question, Suggestions: sugs}
		var b strings.Builder
		fmt.Fprintf(&b, "The question was put to the user:\n%s\n", question)
		for i, s := range sugs {
			fmt.Fprintf(&b, "%d. %s", i+1, s.Text)
			if s.Mode != "" {
				fmt.Fprintf(&b, " (switches to %s mode)", s.Mode)
			}
			b.WriteByte('\n')
		}
		b.WriteString("The answer will come as the user's next message; wait for it.")
		return &engine.Result{Output: b.String(), Data: map[string]any{orchestration.EffectQuestion: q}}, nil
	})
}

var suggestXML = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<suggest(?:\s+mode\s*=\s*"([^"]*)")?\s*>(.*?)</suggest>`)
})

func parseSuggestions(raw json.RawMessage) ([]orchestration.Suggestion, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, fmt.Errorf("must be a list of suggested answers")
		}
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") {
			return parseSuggestions(json.RawMessage(s))
		}
		var out []orchestration.Suggestion
		for _, m := range suggestXML().FindAllStringSubmatch(s, -1) {
			if t := strings.TrimSpace(m[2]); t != "" {
				out = append(out, orchestration.Suggestion{Text: t, Mode: strings.TrimSpace(m[1])})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("must list at least one suggested answer")
		}
		return out, nil
	}
	var out []orchestration.Suggestion
	for i, item := range list {
		var s orchestration.Suggestion
		var text string
		if json.Unmarshal(item, &text) == nil {
			s.Text = text
		} else {
			var obj struct {
				Text   *string `json:"text"`
				Answer *string `json:"answer"`
				Mode   *string `json:"mode"`
			}
			if err := json.Unmarshal(item, &obj); err != nil {
				return nil, fmt.Errorf("suggestion %d must be a string or an object with \"text\"", i+1)
			}
			switch {
			case obj.Text != nil:
				s.Text = *obj.Text
			case obj.Answer != nil:
				s.Text = *obj.Answer
			}
			if obj.Mode != nil {
				s.Mode = *obj.Mode
			}
		}
		if strings.TrimSpace(s.Text) == "" {
			return nil, fmt.Errorf("suggestion %d has no text", i+1)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("must list at least one suggested answer")
	}
	return out, nil
}

// AttemptCompletion is attempt_completion(result): it records the result as
// the end of the session's task, for the user to accept or answer. The
// older optional command (to show the result) is kept with it.
func AttemptCompletion() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		result, err := c.Require("result")
		if err != nil {
			return nil, err
		}
		command, _, err := c.String("command")
		if err != nil {
			return nil, err
		}
		if err := needSession(c); err != nil {
			return nil, err
		}
		return &engine.Result{
			Output: "The result was presented to the user as the completion of the task. " +
				"If the user answers with feedback, continue the task and attempt completion again.",
			Data: map[string]any{orchestration.EffectCompletion: orchestration.Completion{CallID: c.ID, Result: result, Command: command}},
		}, nil
	})
}

// SwitchMode is switch_mode(mode_slug, reason): the session continues in
// another mode, which decides the tools it may call from the next call on.
func SwitchMode(modes Modes) engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		slug, err := c.Require("mode_slug")
		if err != nil {
			return nil, err
		}
		reason, err := c.Require("reason")
		if err != nil {
			return nil, err
		}
		slug = strings.TrimSpace(slug)
		name, ok := modes.ModeName(slug)
		if !ok {
			return nil, unknownMode(modes, "mode_slug", slug)
		}
		if err := needSession(c); err != nil {
			return nil, err
		}
		cur := c.Mode
		if cur == "" {
			cur = modes.DefaultMode()
		}
		if cur == slug {
			return nil, fmt.Errorf("already in %s mode", name)
		}
		curName, ok := modes.ModeName(cur)
		if !ok {
			curName = cur
		}
		out := fmt.Sprintf("Successfully switched from %s mode to %s mode", curName, name)
		if reason != "" {
			out += " because: " + reason
		}
		return &engine.Result{Output: out + ".", Data: map[string]any{orchestration.EffectMode: slug}}, nil
	})
}

func unknownMode(modes Modes, param, slug string) error {
	return &engine.Denial{Code: engine.InvalidArgument, Parameter: param,
		Message: fmt.Sprintf("invalid mode %q", slug),
		Hint:    "use one of: " + strings.Join(modes.ModeSlugs(), ", ")}
}

// NewTask is new_task(mode, message, todos): it delegates a subtask to a
// mode, with its instructions and initial todo list (a markdown checklist,
// which may be empty), for the front door to start.
func NewTask(modes Modes) engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		mode, ok, err := c.String("mode")
		if err == nil && !ok {
			// The spelling of switch_mode, which models carry over.
			mode, ok, err = c.String("mode_slug")
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("mode")
			return nil, err
		}
		message, err := c.Require("message")
		if err != nil {
			return nil, err
		}
		raw, err := c.Arg("todos")
		if err != nil {
			return nil, err
		}
		if raw == nil {
			_, err := c.Require("todos")
			return nil, err
		}
		todos, err := parseTodos(raw)
		if err != nil {
			return nil, err
		}
		mode = strings.TrimSpace(mode)
		name, ok := modes.ModeName(mode)
		if !ok {
			return nil, unknownMode(modes, "mode", mode)
		}
		if err := needSession(c); err != nil {
			return nil, err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		task := orchestration.Task{ID: "task-" + id.String(), Mode: mode, Todos: todos,
			// As Roo Code does, one level of escaping before "@" goes.
			Message: strings.ReplaceAll(message, `\\@`, `\@`)}
		return &engine.Result{
			Output: fmt.Sprintf("Delegated to new task %s in %s mode.", task.ID, name),
			Data:   map[string]any{orchestration.EffectTask: task},
		}, nil
	})
}

// UpdateTodoList is update_todo_list(todos): the session's todo list is
// replaced by the given markdown checklist ("[ ] pending", "[-] in
// progress", "[x] completed", one per line, a leading "- " allowed).
func UpdateTodoList() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		raw, err := c.Arg("todos")
		if err != nil {
			return nil, err
		}
		if raw == nil || string(raw) == "null" {
			_, err := c.Require("todos")
			return nil, err
		}
		todos, err := parseTodos(raw)
		if err != nil {
			return nil, err
		}
		if err := needSession(c); err != nil {
			return nil, err
		}
		if todos == nil {
			todos = []orchestration.Todo{}
		}
		out := "Todo list updated successfully."
		if md := TodoMarkdown(todos); md != "" {
			out += "\n\n" + md
		}
		return &engine.Result{Output: out, Data: map[string]any{orchestration.EffectTodos: todos}}, nil
	})
}

// parseTodos reads a todo list sent as a markdown checklist, or as JSON: a
// list of {"content", "status"} objects or of strings. null is an empty list.
func parseTodos(raw json.RawMessage) ([]orchestration.Todo, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var md string
	if err := json.Unmarshal(raw, &md); err == nil {
		if t := strings.TrimSpace(md); !strings.HasPrefix(t, "[{") && !strings.HasPrefix(t, `["`) {
			return ParseChecklist(md), nil
		}
		raw = json.RawMessage(strings.TrimSpace(md))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "todos",
			Message: "todos is not a markdown checklist or a JSON list",
			Hint:    "send the list as lines such as \"[x] done\", \"[-] doing\", \"[ ] to do\""}
	}
	var out []orchestration.Todo
	for i, item := range items {
		var t orchestration.Todo
		var s string
		if json.Unmarshal(item, &s) == nil {
			t.Content = s
		} else if err := json.Unmarshal(item, &t); err != nil {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "todos",
				Message: fmt.Sprintf("todo %d is not a string or an object with content and status", i+1)}
		}
		t.Content = strings.TrimSpace(t.Content)
		if t.Content == "" {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "todos",
				Message: fmt.Sprintf("todo %d has no content", i+1)}
		}
		switch t.Status {
		case "completed", "in_progress":
		case "", "pending":
			t.Status = "pending"
		default:
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "todos",
				Message: fmt.Sprintf("todo %d has the status %q; use pending, in_progress or completed", i+1, t.Status)}
		}
		t.ID = todoID(t)
		out = append(out, t)
	}
	return out, nil
}

var checklistItem = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:-\s*)?\[\s*([ xX\-~])\s*\]\s+(.+)$`)
})

// ParseChecklist reads a markdown checklist as Roo Code does: each line
// "[ ] ...", "[x] ...", "[-] ..." (or "[~] ..."), optionally after "- ", is
// an item; other lines are ignored.
func ParseChecklist(md string) []orchestration.Todo {
	var out []orchestration.Todo
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		m := checklistItem().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t := orchestration.Todo{Content: m[2], Status: "pending"}
		switch m[1] {
		case "x", "X":
			t.Status = "completed"
		case "-", "~":
			t.Status = "in_progress"
		}
		t.ID = todoID(t)
		out = append(out, t)
	}
	return out
}

// todoID is Roo Code's: the MD5 of content and status, so that an item's id
// is stable while it is unchanged.
func todoID(t orchestration.Todo) string {
	sum := md5.Sum([]byte(t.Content + t.Status))
	return hex.EncodeToString(sum[:])
}

// TodoMarkdown writes a todo list as a markdown checklist.
func TodoMarkdown(todos []orchestration.Todo) string {
	lines := make([]string, len(todos))
	for i, t := range todos {
		box := "[ ]"
		switch t.Status {
		case "completed":
			box = "[x]"
		case "in_progress":
			box = "[-]"
		}
		lines[i] = box + " " + t.Content
	}
	return strings.Join(lines, "\n")
}
