package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

func newTasksCmd() *cobra.Command {
	var workspace string
	var asJSON bool
	store := func() (*agent.Store, error) {
		abs, err := filepath.Abs(workspace)
		if err != nil {
			return nil, err
		}
		return &agent.Store{Dir: filepath.Join(abs, orchestration.DirName, orchestration.TasksDir)}, nil
	}
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List and show the tasks of intentgate run",
		Long: `tasks shows the tasks intentgate run keeps under .orchestration/tasks/:
their state (derived from their messages), mode, model, token usage and cost.
A task's id is also its governance session id, so "intentgate session show ID"
and the ledger's dev.intentgate.session field lead to the same conversation.`,
	}
	cmd.PersistentFlags().StringVarP(&workspace, "workspace", "w", ".", "the workspace directory")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tasks, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := store()
			if err != nil {
				return err
			}
			tasks, err := s.List()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if tasks == nil {
					tasks = []*agent.Metadata{}
				}
				b, _ := json.MarshalIndent(tasks, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			if len(tasks) == 0 {
				fmt.Fprintln(out, "no tasks yet: start one with intentgate run \"task\"")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tMODE\tMODEL\tCOST\tTASK")
			for _, t := range tasks {
				st := string(t.State.State)
				if t.State.Ask != "" {
					st += " (" + string(t.State.Ask) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t$%.4f\t%s\n", t.ID, st, t.Mode, t.Model, t.TokenUsage.TotalCost, short(t.Task, 50))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a task: metadata, messages and usage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store()
			if err != nil {
				return err
			}
			meta, msgs, _, err := s.Load(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(map[string]any{"task": meta, "messages": msgs}, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			fmt.Fprintf(out, "task %s\n  state:   %s %s\n  mode:    %s\n  model:   %s (%s)\n  created: %s\n  task:    %s\n",
				meta.ID, meta.State.State, meta.State.Ask, meta.Mode, meta.Model, meta.Provider, meta.Created.Format("2006-01-02 15:04:05Z"), meta.Task)
			tu := meta.TokenUsage
			fmt.Fprintf(out, "  tokens:  %d in, %d out, %d cache writes, %d cache reads; cost $%.4f\n",
				tu.TotalTokensIn, tu.TotalTokensOut, tu.TotalCacheWrites, tu.TotalCacheReads, tu.TotalCost)
			for name, u := range meta.ToolUsage {
				fmt.Fprintf(out, "  tool %s: %d attempts, %d failures\n", name, u.Attempts, u.Failures)
			}
			fmt.Fprintf(out, "messages (%d):\n", len(msgs))
			for _, m := range msgs {
				kind := string(m.Say)
				if m.Type == agent.TypeAsk {
					kind = "ask " + string(m.Ask)
				}
				fmt.Fprintf(out, "  %-24s %s\n", kind, short(m.Text, 100))
			}
			return nil
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}

func short(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}
