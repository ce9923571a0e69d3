package hooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

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
	always   []string
}

// NewModes returns the mode policy. always are the tools every mode has
// whatever its groups, as the tool catalog declares them
// (internal/catalog.Always).
func NewModes(sessions *orchestration.SessionStore, modes *orchestration.ModeStore, always []string) *Modes {
	return &Modes{sessions: sessions, modes: modes, always: slices.Clone(always)}
}

func (m *Modes) Pre(ctx context.Context, c *engine.Call) error {
	if slices.Contains(m.always, c.Tool) {
		return nil
	}
	if c.Mode == "" && c.Session != "" {
		s, err := m.sessions.Load(c.Session)
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
				c.Tool, mode.Name, mode.Slug, m.allows(mode)),
			Hint: "use one of the tools of this mode, or switch_mode to code"}
	}
	g, ok := mode.Group(string(spec.Group))
	if !ok {
		return &engine.Denial{Code: engine.ToolNotAllowed,
			Message: fmt.Sprintf("%s (group %s) is not available in %s mode (%s), which allows %s",
				c.Tool, spec.Group, mode.Name, mode.Slug, m.allows(mode)),
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

// allows describes what a mode grants, for messages.
func (m *Modes) allows(mode *orchestration.Mode) string {
	always := "the tools every mode has (" + strings.Join(m.always, ", ") + ")"
	if len(mode.Groups) == 0 {
		return "only " + always
	}
	gs := make([]string, len(mode.Groups))
	for i, g := range mode.Groups {
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

// Post records the effect of a session tool in its session.
func (m *Modes) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	if c.Session == "" || r == nil || len(r.Data) == 0 {
		return nil
	}
	var apply func(s *orchestration.Session, now time.Time) error
	switch c.Tool {
	case "switch_mode":
		slug, ok := r.Data[orchestration.EffectMode].(string)
		if !ok {
			return nil
		}
		apply = func(s *orchestration.Session, _ time.Time) error {
			s.Mode = slug
			return nil
		}
	case "update_todo_list":
		todos, err := effect[[]orchestration.Todo](c, r, orchestration.EffectTodos)
		if err != nil {
			return err
		}
		apply = func(s *orchestration.Session, _ time.Time) error { return s.SetTodoList(todos) }
	case "ask_followup_question":
		q, err := effect[orchestration.Question](c, r, orchestration.EffectQuestion)
		if err != nil {
			return err
		}
		apply = func(s *orchestration.Session, now time.Time) error {
			q.Asked = now
			s.Question = &q
			return nil
		}
	case "attempt_completion":
		done, err := effect[orchestration.Completion](c, r, orchestration.EffectCompletion)
		if err != nil {
			return err
		}
		apply = func(s *orchestration.Session, now time.Time) error {
			done.At = now
			s.Completion = &done
			return nil
		}
	case "new_task":
		t, err := effect[orchestration.Task](c, r, orchestration.EffectTask)
		if err != nil {
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
	_, err := m.sessions.Update(c.Session, func(s *orchestration.Session) error {
		return apply(s, time.Now().UTC())
	})
	if err != nil {
		return fmt.Errorf("record the effect of %s in session %q: %w", c.Tool, c.Session, err)
	}
	if c.Tool == "switch_mode" {
		c.Mode = r.Data[orchestration.EffectMode].(string)
	}
	return nil
}

// effect is the value a session tool put in r.Data under key, of the
// session's own type; anything else is a tool that broke its contract.
func effect[T any](c *engine.Call, r *engine.Result, key string) (T, error) {
	v, ok := r.Data[key].(T)
	if !ok {
		return v, fmt.Errorf("%s returned %s as %T, want %T", c.Tool, key, r.Data[key], v)
	}
	return v, nil
}
