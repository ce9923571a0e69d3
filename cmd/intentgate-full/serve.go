package main

import (
	"context"
	"log/slog"

	"github.com/intentgate/intentgate/internal/agentrun"
	"github.com/intentgate/intentgate/internal/daemon"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	o := &daemon.Options{Version: version}
	var ipcPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep the engine warm and answer hook events over HTTP and a Unix socket",
		Long: `serve keeps the workspace open and answers hook events without a process per
event:

  POST http://ADDR/hooks/AGENT   the event as the body, the answer as the body
                                 (Claude Code's "http" hooks, for settings you
                                 write yourself: install writes command hooks)
  unix socket .orchestration/intentgate.sock
                                 used by "intentgate hook AGENT" whenever it
                                 finds the daemon running there; without it, the
                                 hook does the work itself, with the same result

It listens on loopback only. --addr defaults to the address of an http hook to
/hooks/AGENT in the workspace's .claude/settings.json, if you wrote one, else
to 127.0.0.1 on a free port ("intentgate install claude-code --daemon=ADDR"
prints the serve command with its address). Once listening it prints one JSON line on
stdout: {"url":"http://127.0.0.1:PORT/hooks/claude-code","socket":"..."}.
SIGINT or SIGTERM stops it after the events in progress are answered.

Claude Code treats an http hook that cannot be reached as a non-blocking
error: while the daemon is down, tool calls of an http-hooked session are not
checked. Command hooks ("intentgate install claude-code") never go unchecked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if ipcPath != "" {
				o.Also = func(rt *gate.Runtime, log *slog.Logger) (func(), error) { return agentrun.ServeIPC(ipcPath, rt, log) }
			}
			return daemon.Run(ctx, *o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.Workspace, "workspace", "w", ".", "the workspace directory")
	cmd.Flags().StringVar(&o.Addr, "addr", "", "loopback address for HTTP hooks (default: the one install --daemon wrote, else 127.0.0.1:0)")
	cmd.Flags().StringVar(&o.Socket, "socket", "", `the Unix socket (default .orchestration/intentgate.sock; "none" for none)`)
	cmd.Flags().StringVar(&ipcPath, "ipc", "", "also serve Roo Code's IPC protocol (start, watch and answer agent tasks) on this Unix socket")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "log every event on stderr")
	return cmd
}
