package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	return newRootOf(nil, stdin, stdout, stderr)
}

// newRootOf is the root command with only the subcommand only makes, or
// with all of them when only is nil.
func newRootOf(only func() *cobra.Command, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "intentgate",
		Short: "Governance middleware for AI coding agents",
		Long: `intentgate sits between an AI coding agent and your workspace.

Every tool call passes its pre-hooks: the agent must have selected an intent
declared in .orchestration/active_intents.yaml, the file must lie inside that
intent's owned_scope, and the agent must have read the file's current content.
Every change is appended to .orchestration/agent_trace.jsonl (Agent Trace
0.1.0 records with line ranges and SHA-256 content hashes, hash-chained) and
summarized in .orchestration/intent_map.md.

Start with:  intentgate demo`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if only != nil {
		root.AddCommand(only())
		return root
	}
	root.AddCommand(
		newInitCmd(),
		newDispatchCmd(),
		newDemoCmd(),
		newIntentsCmd(),
		newPromptCmd(),
		newSessionCmd(),
		newHookCmd(), newIntentCmd(), newInstallCmd(), newUninstallCmd(),
		newMCPCmd(), newServeCmd(), newDoctorCmd(),
		newTraceCmd(),
		newTaskCmd(),
		newExecCmd(),
		newRunCmd(), newTasksCmd(),
	)
	return root
}
