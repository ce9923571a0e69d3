package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/intentgate/intentgate/internal/dispatch"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/spf13/cobra"
)

type dispatchOptions struct {
	workspace string
	agent     string
	model     string
}

func newDispatchCmd() *cobra.Command {
	o := &dispatchOptions{}
	cmd := &cobra.Command{
		Use:   "dispatch",
		Short: "Run JSON tool calls from stdin through the engine, one per line",
		Long: `dispatch reads one JSON call per line on stdin, runs it through the engine
in the workspace, and writes one JSON result per line on stdout.

A call:
  {"id":"1","session":"s1","tool":"write_to_file",
   "args":{"path":"src/a.go","content":"package a\n"},
   "agent":{"name":"my-agent","model":"some-model"}}

A result is one of:
  {"id":"1","ok":true,"output":"..."}
  {"id":"1","ok":false,"denial":{"error":"SCOPE_VIOLATION",...}}
  {"id":"1","ok":false,"error":"..."}            (the tool itself failed)
A result may carry "warnings" when the call happened but recording it failed,
and "data" with what the call decided for the session (a mode switch, a todo
list, a question for the user, a completion, a delegated task).

Tools: select_active_intent, read_file, list_files, search_files,
list_code_definition_names, write_to_file, apply_diff, insert_content,
search_and_replace, execute_command, ask_followup_question,
attempt_completion, switch_mode, new_task, update_todo_list.
Session state lives in .orchestration/sessions/, so a session may span many
dispatch processes. The calls of one session run in order.

The workspace is found from --workspace (default: the current directory)
upwards: the nearest directory with .orchestration/, or the outermost one
above it whose .orchestration/ declares intents. Where there is none,
dispatch refuses to start: run "intentgate init" first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDispatch(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "a directory in the workspace (the workspace is found upwards from it)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "agent name for calls that name none")
	cmd.Flags().StringVar(&o.model, "model", "", "model id for calls that name none")
	return cmd
}

func runDispatch(ctx context.Context, o *dispatchOptions, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	root, err := gate.Find(o.workspace)
	if err != nil {
		return err
	}
	rt, err := gate.Open(root, gate.Options{Version: version})
	if err != nil {
		return err
	}
	defer rt.Close()
	// Interrupted or terminated (a process manager stopping it), dispatch
	// writes the derived state it batches (the intent map, the sessions'
	// read hashes) and exits at once, even while it waits for a call on
	// its input: a call in flight ends as a crash would, which the journal
	// covers.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case sig := <-sigs:
			cancel()
			if err := rt.FlushDerived(); err != nil {
				fmt.Fprintf(errw, "intentgate: dispatch: %v\n", err)
			}
			code := 130
			if sig == syscall.SIGTERM {
				code = 143
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return dispatch.Serve(ctx, rt, dispatch.Options{Agent: o.agent, Model: o.model, Problems: errw}, in, out)
}
