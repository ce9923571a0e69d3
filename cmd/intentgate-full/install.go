package main

import (
	"io"
	"strings"

	"github.com/intentgate/intentgate/internal/install"
	"github.com/spf13/cobra"
)

func newInstallCmd() *cobra.Command {
	o := &install.Options{}
	cmd := &cobra.Command{
		Use:   "install AGENT",
		Short: "Write an agent's hook configuration and MCP registration for intentgate",
		Long: `install configures AGENT (` + strings.Join(install.Agents, ", ") + `) to send its
hook events to "intentgate hook AGENT" and to know intentgate's MCP server
("intentgate mcp"):

  claude-code  .claude/settings.json (hooks), .mcp.json (MCP)
  codex        .codex/hooks.json (hooks), .codex/config.toml (MCP)
  gemini       .gemini/settings.json (hooks and MCP)
  cursor       .cursor/hooks.json (hooks), .cursor/mcp.json (MCP)
  cline        .clinerules/hooks/<Event> scripts (MCP: see the note it prints)

It merges into existing files and keeps everything else in them, in order.
Running it again changes nothing. --global writes the user's files instead
(~/.claude/settings.json, ~/.claude.json, ~/.codex, ~/.gemini, ~/.cursor,
~/Documents/Cline/Hooks); those hooks stay silent in workspaces without
.orchestration/. "intentgate uninstall AGENT" removes exactly what install
added.`,
		Example: `  intentgate install claude-code --dry-run
  intentgate install claude-code`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(o, args[0], false, cmd.OutOrStdout())
		},
	}
	installFlags(cmd, o)
	cmd.Flags().BoolVar(&o.Trust, "trust", false, "codex: record the project as trusted in the user's Codex config.toml (Codex skips an untrusted project's hooks)")
	cmd.Flags().StringVar(&o.Daemon, "daemon", "", "claude-code: print the command that starts `intentgate serve` at this `address`, which the hooks use through its socket while it runs")
	cmd.Flags().Lookup("daemon").NoOptDefVal = install.DefaultDaemonAddr
	return cmd
}

func newUninstallCmd() *cobra.Command {
	o := &install.Options{}
	cmd := &cobra.Command{
		Use:   "uninstall AGENT",
		Short: "Remove what install added to an agent's configuration",
		Long: `uninstall removes from AGENT's configuration files exactly what
"intentgate install AGENT" added: intentgate's hooks and its MCP server entry.
Everything else stays; a file or directory that install created and that is
left empty is removed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(o, args[0], true, cmd.OutOrStdout())
		},
	}
	installFlags(cmd, o)
	return cmd
}

func installFlags(cmd *cobra.Command, o *install.Options) {
	cmd.Flags().BoolVar(&o.Global, "global", false, "configure the user's settings instead of the workspace's")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the changes as a unified diff, write nothing")
	cmd.Flags().StringVarP(&o.Workspace, "workspace", "w", ".", "the workspace directory")
	cmd.Flags().StringVar(&o.Command, "command", "intentgate", "the intentgate command the agent runs (a name on PATH, or an absolute path)")
}

func runInstall(o *install.Options, agent string, remove bool, out io.Writer) error {
	if remove {
		return install.Uninstall(*o, agent, out)
	}
	return install.Install(*o, agent, out)
}
