package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/agentrun"
	"github.com/intentgate/intentgate/prompts"
	"github.com/spf13/cobra"
)

type promptOptions struct {
	mode      string
	format    string
	workspace string
}

func newPromptCmd() *cobra.Command {
	o := &promptOptions{}
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the system prompt or the tool definitions for a mode",
		Long: `prompt prints what a model working through intentgate is given, so that any
agent loop can reuse it.

--format text (the default) prints the system prompt for the mode: role, tool
use, the intent protocol (select an intent first, stay in its owned_scope,
what each refusal code means), capabilities, modes, rules with the workspace
root, system information, objective and the mode's own instructions. It lists
the intents declared in the workspace's .orchestration/active_intents.yaml
when that file loads; if it does not, the prompt goes without them and the
reason is printed on stderr.

--format openai and --format anthropic print the tools the mode may call as
function definitions, in the shape each API takes:
  openai     [{"type":"function","function":{"name","description","parameters"}}]
  anthropic  [{"name","description","input_schema"}]

Modes: code (the default), architect, ask, debug, orchestrator. Each mode has
the tools of its groups (read, edit, command) plus select_active_intent,
ask_followup_question, attempt_completion, switch_mode, new_task and
update_todo_list, which every mode has.`,
		Example: `  intentgate prompt
  intentgate prompt --mode architect --workspace ~/src/shop
  intentgate prompt --mode ask --format anthropic > tools.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPrompt(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.mode, "mode", "m", prompts.DefaultMode, "the mode: "+strings.Join(modeSlugs(), ", "))
	cmd.Flags().StringVarP(&o.format, "format", "f", "text", "what to print: text (the system prompt), openai or anthropic (the tool definitions)")
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory (for --format text)")
	return cmd
}

func modeSlugs() []string {
	var s []string
	for _, m := range prompts.Modes() {
		s = append(s, m.Slug)
	}
	return s
}

func runPrompt(o *promptOptions, out, errw io.Writer) error {
	if _, ok := prompts.LookupMode(o.mode); !ok {
		return fmt.Errorf("unknown mode %q: use one of %s", o.mode, strings.Join(modeSlugs(), ", "))
	}
	switch o.format {
	case "openai":
		_, err := out.Write(prompts.OpenAI(prompts.ForMode(o.mode)))
		return err
	case "anthropic":
		_, err := out.Write(prompts.Anthropic(prompts.ForMode(o.mode)))
		return err
	case "text":
	default:
		return fmt.Errorf("unknown format %q: use text, openai or anthropic", o.format)
	}

	ws, err := engine.OpenWorkspace(o.workspace)
	if err != nil {
		return err
	}
	dir := ws.Dir
	ws.Close()
	opts := prompts.SystemOptions{Mode: o.mode, Workspace: dir}.WithHost()
	intents, err := agentrun.Intents(dir)
	if err != nil {
		fmt.Fprintf(errw, "intentgate: the prompt lists no intents: %v\n", err)
	}
	opts.Intents = intents
	_, err = io.WriteString(out, prompts.System(opts))
	return err
}
