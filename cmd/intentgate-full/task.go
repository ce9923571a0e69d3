package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/intentgate/intentgate/agent/ipc"
	"github.com/spf13/cobra"
)

// ipcSocketEnv is where Roo Code (and intentgate run) look for the socket.
const ipcSocketEnv = "ROO_CODE_IPC_SOCKET_PATH"

type taskOptions struct {
	socket string
	// start
	mode, provider, model, baseURL string
	autoApprove                    []string
	maxRequests                    int
	config                         string
	noWatch                        bool
	// watch
	task string
}

func newTaskCmd() *cobra.Command {
	o := &taskOptions{}
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Start, watch, answer and cancel agent tasks over the IPC socket",
		Long: `task talks to an IPC server (intentgate's agent, or Roo Code itself) over
Roo Code's IPC protocol on a Unix socket: --socket, or $` + ipcSocketEnv + `.

Events are printed as JSON lines, one TaskEvent each:
  {"eventName":"message","payload":[{"taskId":"...","action":"created","message":{...}}]}`,
	}
	cmd.PersistentFlags().StringVar(&o.socket, "socket", os.Getenv(ipcSocketEnv), "the IPC socket (default $"+ipcSocketEnv+")")

	start := &cobra.Command{
		Use:   "start [flags] TEXT",
		Short: "Start a task and follow its events until it completes or aborts",
		Long: `start sends StartNewTask with a configuration built from the flags (Roo Code's
setting names; --config adds any other setting as JSON), prints the task's
events as JSON lines and exits 0 when it completes, 1 when it aborts.
With --no-watch it prints only the task id.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTaskStart(cmd.Context(), o, args[0], cmd.OutOrStdout())
		},
	}
	start.Flags().StringVar(&o.mode, "mode", "", "the mode slug (code, architect, ask, debug, orchestrator, ...)")
	start.Flags().StringVar(&o.provider, "provider", "", "apiProvider: anthropic, openai, openrouter, ollama, lmstudio, ...")
	start.Flags().StringVar(&o.model, "model", "", "the model id")
	start.Flags().StringVar(&o.baseURL, "base-url", "", "the provider's base URL")
	start.Flags().StringSliceVar(&o.autoApprove, "auto-approve", nil, "groups approved without asking: read, edit, command, mcp, browser, modes, subtasks, followup, todo")
	start.Flags().IntVar(&o.maxRequests, "max-requests", 0, "allowedMaxRequests: a cap on auto-approved requests (0: none)")
	start.Flags().StringVar(&o.config, "config", "", `more settings as a JSON object, e.g. '{"consecutiveMistakeLimit":5}'`)
	start.Flags().BoolVar(&o.noWatch, "no-watch", false, "print the task id and return at once")

	cancel := &cobra.Command{
		Use:   "cancel TASK_ID",
		Short: "Cancel a running task (it stays resumable)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTaskCommand(cmd.Context(), o, ipc.CommandCancelTask, args[0])
		},
	}
	send := &cobra.Command{
		Use:   "send TEXT",
		Short: "Answer the latest task's pending ask with a message (SendMessage)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTaskCommand(cmd.Context(), o, ipc.CommandSendMessage, ipc.SendMessage{Text: args[0]})
		},
	}
	watch := &cobra.Command{
		Use:   "watch",
		Short: "Print the events of every task (or of --task) as JSON lines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTaskWatch(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	watch.Flags().StringVar(&o.task, "task", "", "only this task's events; stop when it completes or aborts")
	cmd.AddCommand(start, cancel, send, watch)
	return cmd
}

func (o *taskOptions) dial(ctx context.Context) (*ipc.Client, error) {
	if o.socket == "" {
		return nil, &exitError{code: 2, err: errors.New("no socket: pass --socket PATH or set " + ipcSocketEnv)}
	}
	return ipc.Dial(ctx, o.socket)
}

// configuration builds the StartNewTask configuration of the flags.
func (o *taskOptions) configuration() (json.RawMessage, error) {
	conf, err := ipc.StartSettings{Mode: o.mode, Provider: o.provider, Model: o.model, BaseURL: o.baseURL,
		AutoApprove: o.autoApprove, MaxRequests: o.maxRequests, Extra: o.config}.Configuration()
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	return conf, nil
}

func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func runTaskStart(ctx context.Context, o *taskOptions, text string, out io.Writer) error {
	conf, err := o.configuration()
	if err != nil {
		return err
	}
	ctx, stop := signalContext(ctx)
	defer stop()
	c, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	if err := c.Send(ipc.CommandStartNewTask, ipc.StartNewTask{Configuration: conf, Text: text}); err != nil {
		return err
	}
	me := c.Ack().ClientID
	var task string
	for {
		m, ev, err := c.NextEvent()
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{code: 1, err: fmt.Errorf("interrupted; the task %s goes on (intentgate task cancel %s)", task, task)}
			}
			return fmt.Errorf("the server closed the connection: %w", err)
		}
		if m.RelayClientID != me {
			continue
		}
		if task == "" {
			if refusal := ev.ErrorText(); refusal != "" && ev.Task() == "" {
				return errors.New(refusal)
			}
			if ev.Name != ipc.EventTaskCreated {
				continue
			}
			task = ev.Task()
			if o.noWatch {
				fmt.Fprintln(out, task)
				return nil
			}
		}
		if ev.Task() != task && !(ev.Name == ipc.EventTaskSpawned && len(ev.Payload) > 0 && ev.Payload[0] == task) {
			continue
		}
		if err := printEvent(out, m); err != nil {
			return err
		}
		switch ev.Name {
		case ipc.EventTaskCompleted:
			return nil
		case ipc.EventTaskAborted:
			return &exitError{code: 1, err: fmt.Errorf("task %s was aborted", task)}
		}
	}
}

func runTaskCommand(ctx context.Context, o *taskOptions, name ipc.CommandName, data any) error {
	c, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Send(name, data)
}

func runTaskWatch(ctx context.Context, o *taskOptions, out io.Writer) error {
	ctx, stop := signalContext(ctx)
	defer stop()
	c, err := o.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	for {
		m, ev, err := c.NextEvent()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the server closed the connection: %w", err)
		}
		if o.task != "" && ev.Task() != o.task {
			continue
		}
		if err := printEvent(out, m); err != nil {
			return err
		}
		if o.task != "" && (ev.Name == ipc.EventTaskCompleted || ev.Name == ipc.EventTaskAborted) {
			return nil
		}
	}
}

func printEvent(out io.Writer, m *ipc.Message) error {
	_, err := fmt.Fprintf(out, "%s\n", m.Data)
	return err
}
