package main

import (
	"fmt"
	"io"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

func newInitCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Scaffold .orchestration/, .intentignore and .gitignore entries",
		Long: `init prepares a workspace for intentgate: it writes
.orchestration/active_intents.yaml with a commented example intent, an
.intentignore, and .gitignore entries for per-machine session state.
It never overwrites a file that exists; it only adds missing .gitignore lines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(dir, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&dir, "workspace", "w", ".", "the workspace directory")
	return cmd
}

func runInit(dir string, out io.Writer) error {
	steps, err := orchestration.Init(dir)
	for _, st := range steps {
		switch {
		case st.Lines && st.Added > 0:
			fmt.Fprintf(out, "added %d line(s) to %s\n", st.Added, st.Path)
		case st.Lines:
		case st.Created:
			fmt.Fprintf(out, "created %s\n", st.Path)
		default:
			fmt.Fprintf(out, "kept    %s (exists)\n", st.Path)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nNext: edit .orchestration/active_intents.yaml, then run `intentgate intents list`.")
	return nil
}
