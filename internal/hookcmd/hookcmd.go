// Package hookcmd is the hook process: it reads one event of an external
// agent on stdin, answers on stdout in the agent's dialect, and exits. Both
// `intentgate hook AGENT` and the lean `intentgate-hook AGENT` run it, with
// the same arguments, so an event gets the same answer and leaves the same
// records whichever program the agent's settings name.
//
// It imports only what an event needs (the adapter, gatecore's runtime
// with the tools' declarations, the daemon socket's client side): no tool
// implementation, MCP SDK, JSON Schema library, go-git or command-line
// framework, so that intentgate-hook starts about as fast as a Go program
// that only reads stdin.
package hookcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/daemon/hookclient"
)

// Options are the hook command's flags.
type Options struct {
	Workspace    string // overrides the workspace found from the event
	OnlyGoverned bool   // stay silent outside workspaces that have .orchestration/
}

// Short is the command's one-line description.
const Short = "Answer one hook event of an external agent, in its own dialect"

// Long is the command's help text.
func Long() string {
	return `hook reads one hook event of an external coding agent on stdin and answers
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
stderr. "intentgate install AGENT" writes the agent's hook configuration.`
}

// Flag help, shared by both programs.
const (
	WorkspaceUsage    = "the workspace directory (default: found from the event's cwd)"
	OnlyGovernedUsage = "say nothing in workspaces without .orchestration/"
)

// ExitError is a hook process's failure with its exit status.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Run answers the one event of agent read from in. version is intentgate's,
// for the records. It returns an *ExitError for an unknown agent (status
// 2) and when the handler asks for a status other than 0; a refusal is an
// answer, written to out, and Run returns nil.
func Run(ctx context.Context, o Options, version, agent string, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if _, ok := adapter.Lookup(agent); !ok {
		return &ExitError{Code: 2, Err: fmt.Errorf("unknown agent %q; use one of: %s", agent, strings.Join(adapter.Names(), ", "))}
	}
	raw, err := io.ReadAll(io.LimitReader(in, adapter.MaxEventBytes+1))
	if err != nil {
		// An event that cannot be read is refused, as one that cannot be parsed.
		fmt.Fprintf(errw, "intentgate hook %s: cannot read the event: %v\n", agent, err)
		raw = nil
	}
	hd := &adapter.Handler{Workspace: o.Workspace, OnlyGoverned: o.OnlyGoverned,
		Forward: hookclient.Forward(errw), Version: version, Stderr: errw}
	reply, exit := hd.Handle(ctx, agent, raw)
	if _, err := out.Write(reply); err != nil {
		return err
	}
	if exit != 0 {
		return &ExitError{Code: exit, Err: fmt.Errorf("hook %s failed", agent)}
	}
	return nil
}
