package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// modeAlways are the tools every mode has whatever its groups: Roo Code's
// ALWAYS_AVAILABLE_TOOLS, and select_active_intent, since no mode may keep a
// model from following the intent protocol.
var modeAlways = []string{"ask_followup_question", "attempt_completion", "switch_mode", "new_task",
	"update_todo_list", SelectTool}

func isModeAlways(tool string) bool {
	for _, t := range modeAlways {
		if t == tool {
			return true
		}
	}
	return false
}

// Modes is the mode policy. Its pre-hook refuses, with TOOL_NOT_ALLOWED, a
// call that the session's mode does not grant: a tool outside the mode's
// groups, or an edit of a file outside the mode's file restriction
// (architect edits only files matching \.md$). A session that has chosen no
// mode is in orchestration.DefaultMode. Its post-hook records in the session
// what the session tools decided: the mode switched to, the todo list, the
// question for the user, the completion, the delegated task.
type Modes struct {
	sessions *orchestration.SessionStore
	modes    *orchestration.ModeStore
}

// NewModes returns the mode policy.
func NewModes(sessions *orchestration.SessionStore, modes *orchestration.ModeStore) *Modes {
	return &Modes{sessions: sessions, modes: modes}
}

func (m *Modes) Pre(ctx context.Context, c *engine.Call) error {
	if isModeAlways(c.Tool) {
		return nil
	}
	if c.Mode == "" && c.Session != "" {
		s, err := CallSession(c, m.sessions)
		if err != nil {
			return err
		}
		c.Mode = s.Mode
	}
	if c.Mode == "" {
		c.Mode = orchestration.DefaultMode
	}
	set, err := m.modes.Current()
	if err != nil {
		return err
	}
	mode, ok := set.Get(c.Mode)
	if !ok {
		return &engine.Denial{Code: engine.ToolNotAllowed,
			Message: fmt.Sprintf("this session is in mode %q, which is not defined", c.Mode),
			Hint:    "call switch_mode with one of: " + strings.Join(set.Slugs(), ", ")}
	}
	spec, known := c.Spec()
	if !known {
		// A tool we do not know may do anything: only a mode that may edit
		// any file and run commands lets it through.
		e, edits := mode.Group("edit")
		if _, commands := mode.Group("command"); edits && commands && e.FileRegex == "" {
			return nil
		}
		return &engine.Denial{Code: engine.ToolNotAllowed,
			Message: fmt.Sprintf("%s is not a tool intentgate knows, so %s mode (%s), which allows %s, cannot vouch for it",
				c.Tool, mode.Name, mode.Slug, modeAllows(mode)),
			Hint: "use one of the tools of this mode, or switch_mode to code"}
	}
	g, ok := mode.Group(string(spec.Group))
	if !ok {
		return &engine.Denial{Code: engine.ToolNotAllowed,
			Message: fmt.Sprintf("%s (group %s) is not available in %s mode (%s), which allows %s",
				c.Tool, spec.Group, mode.Name, mode.Slug, modeAllows(mode)),
			Hint: fmt.Sprintf("use a tool this mode allows, or call switch_mode with a mode that has the %s group: %s",
				spec.Group, modesWith(set, string(spec.Group)))}
	}
	if spec.Group != engine.GroupEdit || g.FileRegex == "" {
		return nil
	}
	rel, ok, err := c.Target()
	if err != nil || !ok {
		return err // a missing path is the tool's to report
	}
	if g.Allows(rel) {
		return nil
	}
	restriction := g.FileRegex
	if g.Description != "" {
		restriction += " (" + g.Description + ")"
	}
	return &engine.Denial{Code: engine.ToolNotAllowed, Path: rel,
		Message: fmt.Sprintf("%s in %s mode (%s) may only edit files matching %s; %s does not match",
			c.Tool, mode.Name, mode.Slug, restriction, rel),
		Hint: fmt.Sprintf("edit only files matching %s in this mode, or call switch_mode with a mode that may edit %s: %s",
			g.FileRegex, rel, modesEditing(set, rel))}
}

// modeAllows describes what a mode grants, for messages.
func modeAllows(m *orchestration.Mode) string {
	always := "the tools every mode has (" + strings.Join(modeAlways, ", ") + ")"
	if len(m.Groups) == 0 {
		return "only " + always
	}
	gs := make([]string, len(m.Groups))
	for i, g := range m.Groups {
		gs[i] = g.String()
	}
	return "the groups " + strings.Join(gs, ", ") + " and " + always
}

func modesWith(set *orchestration.ModeSet, group string) string {
	var out []string
	for i := range set.Modes {
		if _, ok := set.Modes[i].Group(group); ok {
			out = append(out, set.Modes[i].Slug)
		}
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, ", ")
}

func modesEditing(set *orchestration.ModeSet, rel string) string {
	var out []string
	for i := range set.Modes {
		if g, ok := set.Modes[i].Group("edit"); ok && g.Allows(rel) {
			out = append(out, set.Modes[i].Slug)
		}
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, ", ")
}

// The keys and JSON shapes of the session tools' Result.Data (see
// tools.DataMode and the rest): hooks reads them without importing tools.
const (
	dataMode       = "mode"
	dataTodos      = "todos"
	dataQuestion   = "question"
	dataCompletion = "completion"
	dataTask       = "task"
)

// Post records the effect of a session tool in its session.
func (m *Modes) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	if c.Session == "" || r == nil || len(r.Data) == 0 {
		return nil
	}
	var apply func(s *orchestration.Session, now time.Time) error
	switch c.Tool {
	case "switch_mode":
		slug, ok := r.Data[dataMode].(string)
		if !ok {
			return nil
		}
		apply = func(s *orchestration.Session, _ time.Time) error {
			s.Mode = slug
			return nil
		}
	case "update_todo_list":
		var todos []orchestration.Todo
		if err := redecode(r.Data[dataTodos], &todos); err != nil {
			return err
		}
		apply = func(s *orchestration.Session, _ time.Time) error { return s.SetTodoList(todos) }
	case "ask_followup_question":
		var q orchestration.Question
		if err := redecode(r.Data[dataQuestion], &q); err != nil {
			return err
		}
		apply = func(s *orchestration.Session, now time.Time) error {
			q.Asked = now
			s.Question = &q
			return nil
		}
	case "attempt_completion":
		var done orchestration.Completion
		if err := redecode(r.Data[dataCompletion], &done); err != nil {
			return err
		}
		apply = func(s *orchestration.Session, now time.Time) error {
			done.At = now
			s.Completion = &done
			return nil
		}
	case "new_task":
		var t orchestration.Task
		if err := redecode(r.Data[dataTask], &t); err != nil {
			return err
		}
		apply = func(s *orchestration.Session, now time.Time) error {
			t.Created = now
			s.Tasks = append(s.Tasks, t)
			return nil
		}
	default:
		return nil
	}
	// Written with the call's other session changes, once, at its end,
	// and durably: a lost mode switch could bring back a mode that allows
	// more.
	now := time.Now().UTC()
	laterSessionDurable(c, m.sessions, func(s *orchestration.Session) error { return apply(s, now) })
	if c.Tool == "switch_mode" {
		c.Mode = r.Data[dataMode].(string)
	}
	return nil
}

// redecode moves a value of the tools' Data into the session's type of the
// same JSON shape.
func redecode(v, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
