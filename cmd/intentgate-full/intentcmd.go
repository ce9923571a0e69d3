package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/spf13/cobra"
)

type intentUseOptions struct {
	workspace string
	session   string
}

func newIntentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "intent",
		Short: "Act on one session's intent",
	}
	o := &intentUseOptions{}
	use := &cobra.Command{
		Use:   "use INTENT_ID --session ID",
		Short: "Select the active intent of an agent's session",
		Long: `use selects INTENT_ID as the active intent of session ID, as the agent's own
call to select_active_intent would: the intent must be declared and
IN_PROGRESS. The session id is the agent's (Claude Code's and Codex's
session_id, Cursor's conversation_id, Cline's taskId); hook adapters use it,
so the agent's next changes are held to that intent.

It prints the intent's context, as the agent would have seen it.`,
		Example: `  intentgate intent use INT-001 --session 760414d5-7830-476e-ac83-f4d52c3e1995`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runIntentUse(ctx, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	use.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	use.Flags().StringVar(&o.session, "session", "", "the agent's session id (required)")
	_ = use.MarkFlagRequired("session")
	cmd.AddCommand(use)
	return cmd
}

func runIntentUse(ctx context.Context, o *intentUseOptions, id string, out, errw io.Writer) error {
	root, err := gate.Find(o.workspace)
	if err != nil {
		return err
	}
	rt, err := gate.Open(root, gate.Options{Version: version})
	if err != nil {
		return err
	}
	defer rt.Close()
	args, err := json.Marshal(map[string]string{"intent_id": id})
	if err != nil {
		return err
	}
	c := &engine.Call{ID: "intent-use", Session: o.session, Tool: hooks.SelectTool,
		Args:  args,
		Agent: engine.Agent{Name: "intentgate-cli"}}
	res, err := rt.Dispatch(ctx, c)
	var pe *engine.PostError
	if err != nil && !errors.As(err, &pe) {
		if d, ok := engine.AsDenial(err); ok {
			return fmt.Errorf("%s: %s (%s)", d.Code, d.Message, d.Hint)
		}
		return err
	}
	fmt.Fprintf(out, "session %s: active intent %s\n%s\n", o.session, c.Intent, res.Output)
	if pe != nil {
		fmt.Fprintf(errw, "intentgate: the call ran, but recording it failed, so the choice may not be kept: %v\n", pe)
	}
	return nil
}
