package gatecore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/intentgate/intentgate/internal/sandbox"
	"github.com/intentgate/intentgate/orchestration"
)

// ExecOptions say how to run one confined command (`intentgate exec`).
type ExecOptions struct {
	// Dir is the command's working directory.
	Dir string
	// Workspace is the governed workspace; "" finds it upwards from Dir.
	Workspace string
	// Session's active intent gives the writable roots; "" (or a session
	// without an intent) may write nothing in the workspace.
	Session string
	// Timeout, when above 0, stops the command and everything it started.
	Timeout time.Duration
	// Describe, when not nil, is told the mechanism, the intent and the
	// writable and read-only paths before the command starts.
	Describe io.Writer
}

// ExecError is how a confined command ended when it did not succeed: Code is
// the exit status to report (the command's own; 124 stopped by the timeout,
// 125 not confined so not run, 127 not started). Err is nil when the
// command ran and said itself what happened.
type ExecError struct {
	Code int
	Err  error
}

func (e *ExecError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExecError) Unwrap() error { return e.Err }

// Exec runs args confined to what the session's intent owns, with the
// standard streams given, and returns nil or an *ExecError.
func Exec(ctx context.Context, o ExecOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ws := o.Workspace
	if ws == "" {
		var err error
		if ws, err = Find(o.Dir); err != nil {
			return &ExecError{125, fmt.Errorf("the command's directory is not in a governed workspace: %w; or run it from the workspace, or pass --workspace", err)}
		}
	} else if _, err := os.Lstat(filepath.Join(ws, orchestration.DirName)); err != nil {
		return &ExecError{125, fmt.Errorf("--workspace %s: it has no .orchestration/; run `intentgate init` there", ws)}
	}
	pol, intent, err := Confinement(ws, o.Session)
	if err != nil {
		return &ExecError{125, fmt.Errorf("cannot work out what the command may write: %w", err)}
	}
	if o.Describe != nil {
		mech, _ := sandbox.Available()
		fmt.Fprintf(o.Describe, "intentgate exec: %s; intent %q\n  writable: %s\n  read-only: %s\n", mech, intent,
			strings.Join(pol.Writable, ", "), strings.Join(pol.ReadOnly, ", "))
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cmd, cleanup, err := sandbox.Command(ctx, pol, o.Dir, args)
	if err != nil {
		return &ExecError{125, err}
	}
	defer cleanup()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &ExecError{124, fmt.Errorf("the command was stopped after %s", o.Timeout)}
	case errors.As(err, &ee):
		return &ExecError{ee.ExitCode(), nil}
	}
	return &ExecError{127, err}
}
