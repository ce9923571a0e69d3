package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

func newIntentsCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "intents",
		Short: "List the declared intents, or check which may change a path",
	}
	cmd.PersistentFlags().StringVarP(&dir, "workspace", "w", ".", "the workspace directory")
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the intents in .orchestration/active_intents.yaml",
		Long: `list loads .orchestration/active_intents.yaml strictly and prints each
intent's id, status, name and owned_scope. If the file has errors, it prints
every one of them with file, line and column, and exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runIntentsList(dir, cmd.OutOrStdout())
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "check PATH",
		Short: "Say which intents own PATH, and why the others do not",
		Long: `check canonicalizes PATH the way the engine does (symlinks resolved, kept
inside the workspace), then says whether it is protected, and for each intent
whether its owned_scope covers it and whether it is IN_PROGRESS. It exits 0 if
some IN_PROGRESS intent may change PATH, 1 if none may.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIntentsCheck(dir, args[0], cmd.OutOrStdout())
		},
	})
	return cmd
}

func runIntentsList(dir string, out io.Writer) error {
	set, err := orchestration.LoadIntents(filepath.Join(dir, orchestration.DirName, orchestration.IntentsName))
	if err != nil {
		return err
	}
	if len(set.Intents) == 0 {
		fmt.Fprintln(out, "no intents are declared in .orchestration/active_intents.yaml")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tNAME\tOWNED_SCOPE")
	for _, in := range set.Intents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.ID, in.Status, in.Name, strings.Join(in.OwnedScope, " "))
	}
	return tw.Flush()
}

func runIntentsCheck(dir, path string, out io.Writer) error {
	o, err := gate.Explain(dir, path)
	if err != nil {
		return err
	}
	if o.Rel != path {
		fmt.Fprintf(out, "%s resolves to %s\n", path, o.Rel)
	}
	switch o.Protected {
	case "governance":
		fmt.Fprintf(out, "%s is a governance file: no intent may change it\n", o.Rel)
		return &exitError{code: 1, err: fmt.Errorf("%s is protected", o.Rel)}
	case "intentignore":
		fmt.Fprintf(out, "%s matches .intentignore: no intent may change it\n", o.Rel)
		return &exitError{code: 1, err: fmt.Errorf("%s is protected", o.Rel)}
	}
	for _, v := range o.Intents {
		in := v.Intent
		switch {
		case v.Err != nil:
			fmt.Fprintf(out, "  %s: cannot decide (%v): denied\n", in.ID, v.Err)
		case !v.Owns:
			fmt.Fprintf(out, "  %s: no, outside owned_scope (%s)\n", in.ID, strings.Join(in.OwnedScope, ", "))
		case !v.May():
			fmt.Fprintf(out, "  %s: owns it through %s, but is %s, not IN_PROGRESS\n", in.ID, v.Glob, in.Status)
		default:
			fmt.Fprintf(out, "  %s: yes, through %s\n", in.ID, v.Glob)
		}
	}
	if !o.May() {
		return &exitError{code: 1, err: fmt.Errorf("no IN_PROGRESS intent may change %s", o.Rel)}
	}
	return nil
}
