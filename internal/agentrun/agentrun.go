// Package agentrun starts intentgate's own agent (package agent) on a
// governed workspace: the options every way of starting it shares (the
// runtime every tool call passes, the mode's system prompt and tools, the
// session's intent, the task store under .orchestration/tasks/), the model
// providers, the terminal front end of `intentgate run` (Run), and the IPC
// front end of `intentgate serve --ipc` (ServeIPC). The CLI only parses
// flags and prints what these return.
package agentrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/agent/provider/openai"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/prompts"
)

// UsageError is an error in what the person asked for (a flag, a missing
// key, an unknown task): the CLI exits with status 2 for it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErr(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// Model says which model API to use.
type Model struct {
	// Provider is anthropic or openai.
	Provider string
	// Model is the model id; empty picks the provider's default.
	Model string
	// BaseURL is the API's base URL; empty takes it from the environment.
	BaseURL string
}

// NewProvider picks the model API, with its key from the environment; a
// missing key names its variable. It returns the model id to use.
func NewProvider(m Model) (provider.Provider, string, error) {
	switch m.Provider {
	case "anthropic":
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, "", usageErr("ANTHROPIC_API_KEY is not set: export it, or use --provider openai")
		}
		if m.BaseURL == "" {
			m.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
		}
		if m.Model == "" {
			m.Model = "claude-sonnet-4-5"
		}
		return anthropic.New(anthropic.Options{APIKey: key, BaseURL: m.BaseURL}), m.Model, nil
	case "openai":
		key := os.Getenv("OPENAI_API_KEY")
		if m.BaseURL == "" {
			m.BaseURL = os.Getenv("OPENAI_BASE_URL")
		}
		if key == "" && m.BaseURL == "" {
			return nil, "", usageErr("OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server")
		}
		if key == "" {
			key = "none" // local servers ignore the key; the SDK wants one
		}
		if m.Model == "" {
			m.Model = "gpt-4.1"
		}
		return openai.New(openai.Options{APIKey: key, BaseURL: m.BaseURL}), m.Model, nil
	}
	return nil, "", usageErr("--provider %q: use anthropic or openai", m.Provider)
}

// Intents lists the workspace's declared intents for the system prompt. A
// workspace without an intents file has none to show, which is no error.
func Intents(dir string) ([]prompts.Intent, error) {
	orch := filepath.Join(dir, orchestration.DirName)
	if err := orchestration.CheckIntact(orch); err != nil {
		return nil, err
	}
	set, err := orchestration.LoadIntents(filepath.Join(orch, orchestration.IntentsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]prompts.Intent, len(set.Intents))
	for i, in := range set.Intents {
		out[i] = prompts.Intent{ID: in.ID, Name: in.Name, Status: string(in.Status), Scope: in.OwnedScope}
	}
	return out, nil
}

// Governed is what every way of starting intentgate's agent shares: the
// governed runtime of the workspace, the mode's system prompt and tools, the
// session's intent, and the task store under .orchestration/tasks/.
func Governed(rt *gate.Runtime) agent.Options {
	ws := rt.Workspace()
	var sessions *orchestration.SessionStore
	if st := rt.Stores(); st != nil {
		sessions = st.Sessions
	}
	return agent.Options{
		Runtime: rt, WS: ws, Workspace: ws.Dir,
		System: func(mode string) string {
			intents, _ := Intents(ws.Dir)
			return prompts.System(prompts.SystemOptions{Mode: mode, Workspace: ws.Dir, Intents: intents}.WithHost())
		},
		Tools: func(mode string) []provider.Tool {
			var ts []provider.Tool
			for _, t := range prompts.ForMode(mode) {
				ts = append(ts, provider.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters()})
			}
			return ts
		},
		ModeName: func(slug string) (string, bool) {
			m, ok := prompts.LookupMode(slug)
			return m.Name, ok
		},
		ActiveIntent: func(session string) string {
			if sessions == nil {
				return ""
			}
			s, err := sessions.Load(session)
			if err != nil || s == nil {
				return ""
			}
			return s.Intent
		},
		Store: &agent.Store{Dir: filepath.Join(ws.Dir, orchestration.DirName, orchestration.TasksDir)},
	}
}

// Options are those of `intentgate run`.
type Options struct {
	Workspace string
	Model
	Mode string
	// AutoApprove is a comma-separated list of auto-approval groups; Yes
	// approves every group.
	AutoApprove string
	Yes         bool
	MaxRequests int
	MaxMistakes int
	// Output is text, json or stream-json.
	Output string
	// Resume continues the stored task with this id instead of a new one.
	Resume     string
	RetryDelay time.Duration
	// Followup is how long a question waits for a person before its first
	// suggestion answers it, when followup is auto-approved.
	Followup time.Duration
	// Version is intentgate's version, for the ledger.
	Version string
	// IPCSocket, when not empty, is where an IPC server is started for the
	// run's task (Roo Code's ROO_CODE_IPC_SOCKET_PATH).
	IPCSocket string
	// Log receives the IPC server's log; nil discards it.
	Log *slog.Logger
}

// Run runs a task (or resumes o.Resume) on the governed workspace that
// holds o.Workspace, showing it on out in o.Output's format and taking the
// answers to its asks from in. It returns the task's result; the task did
// what it was asked only when the outcome is agent.Completed.
func Run(ctx context.Context, o Options, text string, in io.Reader, out, errw io.Writer) (*agent.Result, error) {
	switch o.Output {
	case "text", "json", "stream-json":
	default:
		return nil, usageErr("--output-format %q: use text, json or stream-json", o.Output)
	}
	auto, err := agent.ParseAutoApprove(o.AutoApprove)
	if err != nil {
		return nil, &UsageError{err}
	}
	if o.Yes {
		auto, _ = agent.ParseAutoApprove("all")
	}
	auto.MaxRequests = o.MaxRequests
	prov, model, err := NewProvider(o.Model)
	if err != nil {
		return nil, err
	}
	prices, err := agent.Prices()
	if err != nil {
		return nil, err
	}

	// The governed runtime: every tool call of the agent passes it.
	root, err := gate.Find(o.Workspace)
	if err != nil {
		return nil, &UsageError{err}
	}
	rt, err := gate.Open(root, gate.Options{Version: o.Version})
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	ui := newTerminal(o.Output, out, errw, in)
	opts := Governed(rt)
	opts.Provider, opts.Model, opts.Mode = prov, model, o.Mode
	opts.AutoApprove, opts.FollowupTimeout, opts.MaxMistakes, opts.RetryDelay = auto, o.Followup, o.MaxMistakes, o.RetryDelay
	opts.Prices, opts.OnEvent = prices, ui.event
	var srv *ipcServer
	if o.IPCSocket != "" {
		log := o.Log
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		var stop func()
		if srv, stop, err = serveIPC(o.IPCSocket, rt, log); err != nil {
			return nil, fmt.Errorf("the IPC server (ROO_CODE_IPC_SOCKET_PATH) cannot listen on %s: %w", o.IPCSocket, err)
		}
		defer stop()
		toClients := srv.events()
		opts.OnEvent = func(e agent.Event) {
			ui.event(e)
			toClients(e)
		}
	}
	var task *agent.Task
	if o.Resume != "" {
		if task, err = agent.Resume(o.Resume, opts); err != nil {
			return nil, &UsageError{err}
		}
	} else {
		task = agent.New(text, opts)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go ui.answer(ctx, task, cancel)
	if srv != nil {
		done := make(chan struct{})
		defer close(done)
		srv.adopt(task, cancel, done)
	}
	res, err := task.Run(ctx)
	if err != nil {
		return nil, err
	}
	ui.finish(res, errw)
	return res, nil
}
