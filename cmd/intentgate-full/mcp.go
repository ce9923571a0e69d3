package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/internal/mcpserver"
	"github.com/spf13/cobra"
)

type mcpOptions struct {
	workspace string // "" finds it from the current directory
	session   string // one session id for every connection, instead of a fresh one each
	agent     string // agent name for calls, instead of the client's name
	model     string
	verbose   bool
	maxMsg    int // bytes of one message on stdin
}

func newMCPCmd() *cobra.Command {
	o := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the governed tools over MCP on stdin/stdout",
		Long: `mcp is a Model Context Protocol server on stdin and stdout: it offers the
workspace's governed tools (select_active_intent, read_file, write_to_file,
apply_diff, execute_command, ...) with the JSON Schemas intentgate gives its
own models, and runs every call through the engine, as dispatch does.

Each connection is one intentgate session (a fresh id, unless --session names
one), so the intent a client selects holds for that client only. A fresh
session lives in this process: the files it read and its usage counters are
written to .orchestration/sessions/ with its next intent selection and when
the connection ends, so a read writes nothing. A session named by --session
is written as dispatch writes its sessions (within 200 ms of a call, and at
the end), for the other processes that share it. A client
may send calls without waiting for the answers: they run in the order sent.
A refusal is a tool result with isError set whose text is the denial JSON, e.g.
  {"error":"SCOPE_VIOLATION","tool":"write_to_file","path":"docs/a.md",...}
a tool that failed is a result with isError set and the error's message.
Nothing but MCP messages is written to stdout; logs go to stderr.

One message (a line of JSON-RPC) may be up to --max-message-size bytes
(default 16 MiB, the MCP SDK's own limit; a write_to_file call carries the
whole file in it). A longer line ends the connection: the requests before it
are answered, then the client gets a JSON-RPC error (code -32600, id null)
that names the limit, the same message goes to stderr, and intentgate mcp
exits with status 1.

The workspace is found from --workspace (default: the current directory)
upwards, as dispatch finds it. Where there is none, every call is refused and
nothing is created there.

"intentgate install AGENT" registers this server with the agent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", "", "a directory in the workspace (default: the current directory)")
	cmd.Flags().StringVar(&o.session, "session", "", "the session id of every connection (default: a new one per connection)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "agent name recorded for calls (default: the client's name)")
	cmd.Flags().StringVar(&o.model, "model", "", "model id recorded for calls")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "log every call on stderr")
	cmd.Flags().IntVar(&o.maxMsg, "max-message-size", mcpserver.DefaultMaxMessage, "the longest message read from stdin, in bytes (1 KiB to 1 GiB)")
	return cmd
}

func runMCP(ctx context.Context, o *mcpOptions, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.maxMsg < 1<<10 || o.maxMsg > 1<<30 {
		return fmt.Errorf("--max-message-size %d: give a size in bytes from 1024 (1 KiB) to 1073741824 (1 GiB); the default is %d (16 MiB)", o.maxMsg, mcpserver.DefaultMaxMessage)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	opts := mcpserver.Options{Session: o.session, Agent: o.agent, Model: o.model, Version: version, MaxMessage: o.maxMsg,
		Log: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level}))}
	start := o.workspace
	if start == "" {
		start = "."
	}
	var rt *gate.Runtime
	why := ""
	if root, err := gate.Find(start); err != nil {
		why = err.Error()
	} else {
		if rt, err = gate.Open(root, gate.Options{Version: version}); err != nil {
			return err
		}
		defer rt.Close()
	}
	return mcpserver.New(rt, why, opts).ServeStdio(ctx, in, out)
}
