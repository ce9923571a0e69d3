package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/install"
	"github.com/spf13/cobra"
)

type doctorOptions struct {
	workspace string
}

func newDoctorCmd() *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor [AGENT]",
		Short: "Check that an installed agent is governed in this workspace, end to end",
		Long: `doctor checks, for AGENT (or every agent whose hooks are installed), that the
workspace is governed (.orchestration/), that the agent's configuration holds
intentgate's hooks, that the command they run is found, and that it answers a
synthetic pre-tool event (a write to .orchestration/) with a refusal in the
agent's own format, and that the agent's own settings are as install wrote
them: every hook event with its matcher; Claude Code's sandbox settings (and
bubblewrap and socat on Linux); Codex's sandbox_mode and approval_policy, the
project's trust and the hooks' trust in ~/.codex/config.toml; Gemini CLI's
hooksConfig (the project's, and the user's that can switch intentgate's hook
off) and the trusted folder; Cline's hook scripts. It says what
is missing and exits 1 if anything is.

The synthetic event is refused, and the refusal is recorded in the ledger under
the session "intentgate-doctor".`,
		Example: `  intentgate doctor
  intentgate doctor codex -w ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(o, args, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	return cmd
}

func runDoctor(o *doctorOptions, args []string, out io.Writer) error {
	ws, err := filepath.Abs(o.workspace)
	if err != nil {
		return err
	}
	agents := install.Agents
	if len(args) == 1 {
		agents = args
	}
	if bad := install.Doctor(ws, agents, len(args) == 1, out); bad > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d problem(s): the agent is not fully governed here", bad)}
	}
	return nil
}
