package main

import (
	"context"
	"io"

	"github.com/intentgate/intentgate/internal/demo"
	"github.com/spf13/cobra"
)

type demoOptions struct {
	dir  string
	keep bool
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a scripted agent session in a throwaway workspace, narrated",
		Long: `demo builds a throwaway git workspace with two intents and drives a scripted
agent session through the engine, saying at each step what the agent tried
and what intentgate decided: a write with no intent, selecting an intent, an
in-scope write, an out-of-scope write, an attempt on the ledger, an overwrite
of a file the agent never read, a stale write after someone else changed the
file, and a shell command that tries to touch files in and out of scope (the
one outside fails inside the command: commands run confined). It ends by
printing the ledger and intent_map.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "build the workspace here (must not exist) instead of a temporary directory")
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the workspace afterwards so you can look around")
	return cmd
}

func runDemo(ctx context.Context, o *demoOptions, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	return demo.Run(ctx, demo.Options{Dir: o.dir, Keep: o.keep, Version: version}, out)
}
