package main

import (
	"context"
	"errors"
	"io"

	"github.com/intentgate/intentgate/internal/hookcmd"
	"github.com/spf13/cobra"
)

type hookOptions = hookcmd.Options

func newHookCmd() *cobra.Command {
	o := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook AGENT",
		Short: hookcmd.Short,
		Long:  hookcmd.Long(),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHook(cmd.Context(), o, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.Workspace, "workspace", "w", "", hookcmd.WorkspaceUsage)
	cmd.Flags().BoolVar(&o.OnlyGoverned, "only-governed", false, hookcmd.OnlyGovernedUsage)
	return cmd
}

// runHook is hookcmd.Run, the hook process that intentgate-hook runs too,
// with its exit status in intentgate's form.
func runHook(ctx context.Context, o *hookOptions, agent string, in io.Reader, out, errw io.Writer) error {
	err := hookcmd.Run(ctx, *o, version, agent, in, out, errw)
	var ee *hookcmd.ExitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.Code, err: ee.Err}
	}
	return err
}
