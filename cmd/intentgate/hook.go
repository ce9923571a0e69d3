package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/daemon"
	"github.com/spf13/cobra"
)

type hookOptions struct {
	workspace    string // overrides the workspace found from the event
	onlyGoverned bool   // stay silent outside workspaces that have .orchestration/
}

func newHookCmd() *cobra.Command {
	o := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook AGENT",
		Short: "Answer one hook event of an external agent, in its own dialect",
		Long: `hook reads one hook event of an external coding agent on stdin and answers
on stdout in that agent's dialect: ` + strings.Join(adapter.Names(), ", ") + `.

Pre-tool events pass intentgate's pre-hooks (the call may be refused), post-tool
events its post-hooks (what the call changed is recorded in the ledger).
Session starts get the intent protocol and the declared intents as context, and
a prompt naming @INT-001 selects that intent for the session.

The workspace is the nearest directory with .orchestration/, looking upwards
from the project directory the agent names (CLAUDE_PROJECT_DIR,
GEMINI_PROJECT_DIR), then from the event's cwd, then from the files the call
names. Where none has it, changes are refused (the workspace's own hook
configuration asks for governance) and nothing is created there; with
--only-governed, what a global install writes, hook says nothing instead.

A refusal is an answer, not a failure: hook exits 0 and prints the refusal in
the agent's form. An event it cannot read is refused, with the reason on
stderr. "intentgate install AGENT" writes the agent's hook configuration.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHook(cmd.Context(), o, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", "", "the workspace directory (default: found from the event's cwd)")
	cmd.Flags().BoolVar(&o.onlyGoverned, "only-governed", false, "say nothing in workspaces without .orchestration/")
	return cmd
}

func runHook(ctx context.Context, o *hookOptions, agent string, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, ok := adapter.Lookup(agent); !ok {
		return &exitError{code: 2, err: fmt.Errorf("unknown agent %q; use one of: %s", agent, strings.Join(adapter.Names(), ", "))}
	}
	raw, err := io.ReadAll(io.LimitReader(in, adapter.MaxEventBytes+1))
	if err != nil {
		// An event that cannot be read is refused, as one that cannot be parsed.
		fmt.Fprintf(errw, "intentgate hook %s: cannot read the event: %v\n", agent, err)
		raw = nil
	}
	hd := &adapter.Handler{Workspace: o.workspace, OnlyGoverned: o.onlyGoverned,
		Forward: daemon.Forward(errw), Version: version, Stderr: errw}
	reply, exit := hd.Handle(ctx, agent, raw)
	if _, err := out.Write(reply); err != nil {
		return err
	}
	if exit != 0 {
		return &exitError{code: exit, err: fmt.Errorf("hook %s failed", agent)}
	}
	return nil
}
