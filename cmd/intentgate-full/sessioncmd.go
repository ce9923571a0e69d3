package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

type sessionShowOptions struct {
	workspace string
	id        string
	json      bool
}

func newSessionCmd() *cobra.Command {
	o := &sessionShowOptions{}
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Show what a session has decided and which tools it used",
	}
	cmd.PersistentFlags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's intent, mode, todos, pending question, completion, tasks and tool usage",
		Long: `show prints the state kept in .orchestration/sessions/ for session ID: the
selected intent, the mode, the todo list, a question waiting for an answer,
the result presented as the completion, the tasks delegated with new_task,
and per tool the calls made, how many of them failed (refused, or the tool
itself failed) and the success rate; then the most used tools and the
problematic ones (a failure rate of at least 20% over at least 3 attempts).
With --json the same as one JSON object.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return runSessionShow(o, cmd.OutOrStdout())
		},
	}
	show.Flags().BoolVar(&o.json, "json", false, "print the session and its tool usage analysis as JSON")
	cmd.AddCommand(show)
	return cmd
}

func runSessionShow(o *sessionShowOptions, out io.Writer) error {
	dir := filepath.Join(o.workspace, orchestration.DirName, orchestration.SessionsDir)
	store := orchestration.OpenSessions(dir)
	s, err := store.Load(o.id)
	if err != nil {
		return err
	}
	if s.Created.IsZero() {
		return &exitError{code: 1, err: fmt.Errorf("no session %q is stored in %s", o.id, dir)}
	}
	todos, err := s.TodoList()
	if err != nil {
		return err
	}
	report := orchestration.AnalyzeUsage(s.Usage)
	if o.json {
		return traceWriteJSON(out, struct {
			*orchestration.Session
			Todos     []orchestration.Todo      `json:"todos"`
			ToolUsage orchestration.UsageReport `json:"tool_usage"`
		}{s, todos, report})
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
	writeUsageReport(w, report)
	return w.err
}

// writeUsageReport prints a usage analysis: the per-tool table with success
// rates, then the most used and the problematic tools.
func writeUsageReport(w *sessionWriter, r orchestration.UsageReport) {
	width := len("total")
	for _, st := range r.Tools {
		width = max(width, len(st.Tool))
	}
	w.line("  %-*s  %8s  %8s  %7s", width, "TOOL", "ATTEMPTS", "FAILURES", "SUCCESS")
	for _, st := range append(r.Tools, r.Total) {
		w.line("  %-*s  %8d  %8d  %7s", width, st.Tool, st.Attempts, st.Failures, percent(st))
	}
	names := func(sts []orchestration.ToolStat) string {
		parts := make([]string, len(sts))
		for i, st := range sts {
			parts[i] = fmt.Sprintf("%s (%d)", st.Tool, st.Attempts)
		}
		return strings.Join(parts, ", ")
	}
	w.line("most used:   %s", orNone(names(r.MostUsed)))
	if len(r.Problematic) == 0 {
		w.line("problematic: (none: no tool failed %d%% or more of at least %d attempts)",
			int(orchestration.ProblematicFailureRate*100), orchestration.ProblematicMinAttempts)
		return
	}
	parts := make([]string, len(r.Problematic))
	for i, st := range r.Problematic {
		parts[i] = fmt.Sprintf("%s (%d of %d failed)", st.Tool, st.Failures, st.Attempts)
	}
	w.line("problematic: %s", strings.Join(parts, ", "))
}

func percent(st orchestration.ToolStat) string {
	if st.Attempts == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", st.SuccessRate*100)
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
