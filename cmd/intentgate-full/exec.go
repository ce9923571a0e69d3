package main

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/intentgate/intentgate/internal/gate"
	"github.com/spf13/cobra"
)

type execOptions struct {
	session   string
	workspace string
	timeout   time.Duration
	verbose   bool
}

func newExecCmd() *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec [--session ID] -- COMMAND [ARG...]",
		Short: "Run a command confined to a session's intent",
		Long: `exec runs COMMAND the way intentgate runs every command for an agent: confined
by the kernel to what the session's active intent owns.

  - In the workspace, writes succeed only beneath the static roots of the
    intent's owned_scope (src/auth/** gives src/auth); without a session, or
    before the session selected an intent, nothing in the workspace is
    writable. Reads are open.
  - .orchestration/ (at every depth), .intentignore, .git/, .mcp.json and the
    agents' settings (.claude/, .codex/, .gemini/, .cursor/, .clinerules/)
    stay read-only whatever the scope.
  - Outside the workspace only a private temporary directory ($TMPDIR) and
    the build and package caches are writable (sandbox.writable_outside in
    .orchestration/config.yaml; by default the Go, npm, pnpm, yarn and pip
    caches and ~/.cache).
  - Every process the command starts ends with it, background ones included.
  - The workspaces' keys are hidden, and intentgate serve refuses the
    command's connections. With sandbox.network: deny in config.yaml it has
    no network but a loopback of its own (default: allow).

A refused write fails inside the command with EACCES ("Permission denied") or
EROFS ("Read-only file system"), which the command reports itself. exec exits
with the command's status; 125 when the command could not be confined (it did
not run), 127 when it could not be started.

Linux: user, mount and PID namespaces with Landlock; Landlock alone where user
namespaces are unavailable. macOS: a sandbox-exec (Seatbelt) profile. Where no
confinement exists (Windows, a kernel without Landlock), exec refuses unless
config.yaml sets sandbox.allow_unconfined: true.

Agents' hooks rewrite shell commands to run under exec, e.g.
  intentgate exec --session 5f2c -- sh -c 'go test ./...'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runExec(ctx, o, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.session, "session", "", "the session whose active intent gives the writable roots")
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", "", "the workspace (default: the nearest directory upwards with .orchestration/)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "stop the command and everything it started after this long (default: no limit)")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "print the writable and read-only paths on stderr")
	return cmd
}

// errSilent ends intentgate with a status and no message of its own: the
// command already said what happened.
var errSilent = errors.New("")

func runExec(ctx context.Context, o *execOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	eo := gate.ExecOptions{Dir: cwd, Workspace: o.workspace, Session: o.session, Timeout: o.timeout}
	if o.verbose {
		eo.Describe = stderr
	}
	err = gate.Exec(ctx, eo, args, stdin, stdout, stderr)
	var ee *gate.ExecError
	if errors.As(err, &ee) {
		if ee.Err == nil {
			return &exitError{code: ee.Code, err: errSilent}
		}
		return &exitError{code: ee.Code, err: ee.Err}
	}
	return err
}
