package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/internal/agentrun"
	"github.com/spf13/cobra"
)

type runOptions struct {
	workspace    string
	provider     string
	model        string
	baseURL      string
	mode         string
	yes          bool
	autoApprove  string
	maxRequests  int
	maxMistakes  int
	outputFormat string
	resume       string
	retryDelay   time.Duration
	followup     time.Duration
}

func newRunCmd() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] \"task\"",
		Short: "Run intentgate's own agent on a task, every tool call governed",
		Long: `run gives a task to a model and drives the conversation: the model calls
tools, every call passes the same governed runtime as every other front door
(intent, scope, hash lock, ledger), and the calls you have not auto-approved
are put to you first. The task id is the governance session id; the task is
kept under .orchestration/tasks/ID/ and can be resumed with --resume ID.

Providers (key and base URL from the flags or the environment):
  anthropic   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
  openai      OPENAI_API_KEY, OPENAI_BASE_URL (any OpenAI-compatible server:
              OpenRouter, Ollama, vLLM, LM Studio; a local server needs no key)

Answers to asks come from the terminal when stdin is one (y approves, n
rejects, any other text rejects with that feedback, "y: text" approves with
feedback); otherwise from JSON lines on stdin, one per ask, in order:
  {"type":"askResponse","askResponse":"yesButtonClicked"}
  {"type":"askResponse","askResponse":"noButtonClicked","text":"use port 8080"}
  {"type":"askResponse","askResponse":"messageResponse","text":"an answer"}
When stdin ends, a completion is accepted and any other ask ends the run
(the task stays resumable).

A running command asks command_output after a while: y lets it keep running
while the model goes on (it is judged when it ends; it is killed when the
task ends), n aborts it. On a pipe, steer it with
  {"type":"terminalOperation","terminalOperation":"continue"}   (or "abort")

Output (--output-format): text (readable), stream-json (one ClineMessage per
line as it happens, partial updates included, and each running command's
{"type":"commandExecutionStatus","text":JSON}), json (one object at the end).

With ROO_CODE_IPC_SOCKET_PATH set, run also serves Roo Code's IPC protocol on
that socket, as Roo Code does: clients receive the task's events, answer its
asks (SendMessage), cancel it, or start tasks of their own.
Exit status: 0 when the task completed, 1 when it ended otherwise, 2 on
usage errors.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 0 && o.resume == "") {
				return &exitError{2, errors.New(`run needs the task as one argument (quote it), or --resume ID`)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			task := ""
			if len(args) == 1 {
				task = args[0]
			}
			return runAgent(cmd.Context(), o, task, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	f.StringVar(&o.provider, "provider", "anthropic", "anthropic or openai")
	f.StringVar(&o.model, "model", "", "model id (default claude-sonnet-4-5 for anthropic, gpt-4.1 for openai)")
	f.StringVar(&o.baseURL, "base-url", "", "API base URL (default from ANTHROPIC_BASE_URL / OPENAI_BASE_URL)")
	f.StringVar(&o.mode, "mode", "", "the mode to start in (default code)")
	f.BoolVarP(&o.yes, "yes", "y", false, "auto-approve every group")
	f.StringVar(&o.autoApprove, "auto-approve", "", "groups to auto-approve: "+strings.Join(agent.AllGroups, ","))
	f.IntVar(&o.maxRequests, "max-requests", 0, "ask before going on after this many API requests (0: no limit)")
	f.IntVar(&o.maxMistakes, "max-mistakes", 3, "consecutive mistakes before asking for guidance")
	f.StringVar(&o.outputFormat, "output-format", "text", "text, json or stream-json")
	f.StringVar(&o.resume, "resume", "", "continue the stored task with this id")
	f.DurationVar(&o.followup, "followup-timeout", time.Minute, "with followup auto-approved, answer a question with its first suggestion after this long")
	f.DurationVar(&o.retryDelay, "retry-delay", 2*time.Second, "first backoff after a failed API request (doubles per retry)")
	return cmd
}

func runAgent(ctx context.Context, o *runOptions, text string, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res, err := agentrun.Run(ctx, agentrun.Options{
		Workspace: o.workspace,
		Model:     agentrun.Model{Provider: o.provider, Model: o.model, BaseURL: o.baseURL},
		Mode:      o.mode, AutoApprove: o.autoApprove, Yes: o.yes,
		MaxRequests: o.maxRequests, MaxMistakes: o.maxMistakes,
		Output: o.outputFormat, Resume: o.resume, RetryDelay: o.retryDelay, Followup: o.followup,
		Version:   version,
		IPCSocket: os.Getenv("ROO_CODE_IPC_SOCKET_PATH"),
	}, text, in, out, errw)
	var ue *agentrun.UsageError
	if errors.As(err, &ue) {
		return &exitError{2, err}
	}
	if err != nil {
		return err
	}
	if res.Outcome != agent.Completed {
		return &exitError{1, fmt.Errorf("task %s ended %s in state %s; continue it with: intentgate run --resume %s", res.TaskID, res.Outcome, res.State.State, res.TaskID)}
	}
	return nil
}
