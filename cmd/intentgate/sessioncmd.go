package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

type sessionShowOptions struct {
	workspace string
	id        string
}

func newSessionCmd() *cobra.Command {
	o := &sessionShowOptions{}
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Show what a session has decided and which tools it used",
	}
	cmd.PersistentFlags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	cmd.AddCommand(&cobra.Command{
		Use:   "show ID",
		Short: "Print a session's intent, mode, todos, pending question, completion, tasks and tool usage",
		Long: `show prints the state kept in .orchestration/sessions/ for session ID: the
selected intent, the mode, the todo list, a question waiting for an answer,
the result presented as the completion, the tasks delegated with new_task,
and per tool the calls made and how many of them failed (refused, or the
tool itself failed).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return runSessionShow(o, cmd.OutOrStdout())
		},
	})
	return cmd
}

func runSessionShow(o *sessionShowOptions, out io.Writer) error {
	store := orchestration.OpenSessions(filepath.Join(o.workspace, ".orchestration", "sessions"))
	s, err := store.Load(o.id)
	if err != nil {
		return err
	}
	if s.Created.IsZero() {
		return &exitError{code: 1, err: fmt.Errorf("no session %q is stored in %s", o.id,
			filepath.Join(o.workspace, ".orchestration", "sessions"))}
	}
	todos, err := s.TodoList()
	if err != nil {
		return err
	}
	w := &sessionWriter{out: out}
	w.line("session:  %s", s.ID)
	w.line("intent:   %s", orNone(s.Intent))
	mode := s.Mode
	if mode == "" {
		mode = orchestration.DefaultMode + " (default)"
	}
	w.line("mode:     %s", mode)
	w.line("updated:  %s", s.Updated.Format("2006-01-02 15:04:05Z07:00"))
	w.line("")
	if len(todos) == 0 {
		w.line("todos:    (none)")
	} else {
		w.line("todos:")
		for _, t := range todos {
			w.line("  %s %s", todoBox(t.Status), t.Content)
		}
	}
	if q := s.Question; q != nil {
		w.line("")
		w.line("question: %s", q.Text)
		for i, sg := range q.Suggestions {
			if sg.Mode != "" {
				w.line("  %d. %s (switches to %s)", i+1, sg.Text, sg.Mode)
			} else {
				w.line("  %d. %s", i+1, sg.Text)
			}
		}
	}
	if c := s.Completion; c != nil {
		w.line("")
		w.line("completion (%s):", c.At.Format("2006-01-02 15:04:05Z07:00"))
		for _, l := range strings.Split(strings.TrimRight(c.Result, "\n"), "\n") {
			w.line("  %s", l)
		}
		if c.Command != "" {
			w.line("  command: %s", c.Command)
		}
	}
	if len(s.Tasks) > 0 {
		w.line("")
		w.line("tasks:")
		for _, t := range s.Tasks {
			w.line("  %s  [%s]  %s", t.ID, t.Mode, firstLine(t.Message))
		}
	}
	w.line("")
	if w.err != nil {
		return w.err
	}
	if len(s.Usage) == 0 {
		_, err := fmt.Fprintln(out, "tool usage: (none)")
		return err
	}
	w.line("tool usage:")
	names := make([]string, 0, len(s.Usage))
	for n := range s.Usage {
		names = append(names, n)
	}
	sort.Strings(names)
	width := len("total")
	for _, n := range names {
		width = max(width, len(n))
	}
	w.line("  %-*s  %8s  %8s", width, "TOOL", "ATTEMPTS", "FAILURES")
	total := orchestration.ToolUsage{}
	for _, n := range names {
		u := s.Usage[n]
		total.Attempts += u.Attempts
		total.Failures += u.Failures
		w.line("  %-*s  %8d  %8d", width, n, u.Attempts, u.Failures)
	}
	w.line("  %-*s  %8d  %8d", width, "total", total.Attempts, total.Failures)
	return w.err
}

// sessionWriter keeps the first write error, so the report reads straight.
type sessionWriter struct {
	out io.Writer
	err error
}

func (w *sessionWriter) line(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.out, format+"\n", args...)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func todoBox(status string) string {
	switch status {
	case orchestration.TodoCompleted:
		return "[x]"
	case orchestration.TodoInProgress:
		return "[-]"
	}
	return "[ ]"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
