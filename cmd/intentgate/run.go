package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/agent/provider/openai"
	"github.com/intentgate/intentgate/prompts"
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

Output (--output-format): text (readable), stream-json (one ClineMessage per
line as it happens, partial updates included), json (one object at the end).
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

func usageErr(format string, a ...any) error { return &exitError{2, fmt.Errorf(format, a...)} }

// newProvider picks the model API; a missing key names its variable.
func newProvider(o *runOptions) (provider.Provider, error) {
	switch o.provider {
	case "anthropic":
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, usageErr("ANTHROPIC_API_KEY is not set: export it, or use --provider openai")
		}
		if o.baseURL == "" {
			o.baseURL = os.Getenv("ANTHROPIC_BASE_URL")
		}
		if o.model == "" {
			o.model = "claude-sonnet-4-5"
		}
		return anthropic.New(anthropic.Options{APIKey: key, BaseURL: o.baseURL}), nil
	case "openai":
		key := os.Getenv("OPENAI_API_KEY")
		if o.baseURL == "" {
			o.baseURL = os.Getenv("OPENAI_BASE_URL")
		}
		if key == "" && o.baseURL == "" {
			return nil, usageErr("OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server")
		}
		if key == "" {
			key = "none" // local servers ignore the key; the SDK wants one
		}
		if o.model == "" {
			o.model = "gpt-4.1"
		}
		return openai.New(openai.Options{APIKey: key, BaseURL: o.baseURL}), nil
	}
	return nil, usageErr("--provider %q: use anthropic or openai", o.provider)
}

func runAgent(ctx context.Context, o *runOptions, text string, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	switch o.outputFormat {
	case "text", "json", "stream-json":
	default:
		return usageErr("--output-format %q: use text, json or stream-json", o.outputFormat)
	}
	auto, err := agent.ParseAutoApprove(o.autoApprove)
	if err != nil {
		return &exitError{2, err}
	}
	if o.yes {
		auto, _ = agent.ParseAutoApprove("all")
	}
	auto.MaxRequests = o.maxRequests
	prov, err := newProvider(o)
	if err != nil {
		return err
	}
	prices, err := agent.Prices()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	// The governed runtime: every tool call of the agent passes it.
	root, err := gate.Find(o.workspace)
	if err != nil {
		return &exitError{2, err}
	}
	rt, err := gate.Open(root, gate.Options{Version: version})
	if err != nil {
		return err
	}
	defer rt.Close()
	ui := newRunUI(o.outputFormat, out, errw, in)
	opts := governedAgent(rt)
	opts.Provider, opts.Model, opts.Mode = prov, o.model, o.mode
	opts.AutoApprove, opts.FollowupTimeout, opts.MaxMistakes, opts.RetryDelay = auto, o.followup, o.maxMistakes, o.retryDelay
	opts.Prices, opts.OnEvent = prices, ui.event
	var task *agent.Task
	if o.resume != "" {
		if task, err = agent.Resume(o.resume, opts); err != nil {
			return &exitError{2, err}
		}
	} else {
		task = agent.New(text, opts)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go ui.answer(ctx, task, cancel)
	res, err := task.Run(ctx)
	if err != nil {
		return err
	}
	ui.finish(res, errw)
	if res.Outcome != agent.Completed {
		return &exitError{1, fmt.Errorf("task %s ended %s in state %s; continue it with: intentgate run --resume %s", res.TaskID, res.Outcome, res.State.State, res.TaskID)}
	}
	return nil
}

// runUI shows the task and collects answers.
type runUI struct {
	format string
	mu     sync.Mutex
	out    *bufio.Writer
	errw   io.Writer
	in     io.Reader
	tty    bool
	asks   chan agent.Message
}

func newRunUI(format string, out, errw io.Writer, in io.Reader) *runUI {
	u := &runUI{format: format, out: bufio.NewWriter(out), errw: errw, in: in, asks: make(chan agent.Message, 16)}
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			u.tty = true
		}
	}
	return u
}

func (u *runUI) event(e agent.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	defer u.out.Flush()
	if e.Name == agent.EventWaitingForInput {
		return
	}
	if e.Name != agent.EventMessage || e.Message == nil {
		if e.Name == agent.EventToolFailed && e.Tool == "task_store" {
			fmt.Fprintln(u.errw, "intentgate:", e.Error)
		}
		return
	}
	m := *e.Message
	if m.Type == agent.TypeAsk && !m.IsPartial() {
		select {
		case u.asks <- m:
		default:
		}
	}
	switch u.format {
	case "stream-json":
		b, _ := json.Marshal(m)
		u.out.Write(append(b, '\n'))
	case "text":
		if m.IsPartial() {
			return
		}
		u.text(m, e.TaskID)
	}
}

func (u *runUI) text(m agent.Message, taskID string) {
	w := u.out
	if m.Type == agent.TypeAsk && u.tty {
		agent.RenderAsk(w, m)
		return
	}
	if m.Type == agent.TypeAsk {
		switch m.Ask {
		case agent.AskCommand:
			fmt.Fprintf(w, "? run this command: %s\n", m.Text)
		case agent.AskTool:
			var st agent.SayTool
			_ = json.Unmarshal([]byte(m.Text), &st)
			fmt.Fprintf(w, "? %s %s\n", st.Tool, st.Path)
			if st.Content != "" {
				fmt.Fprintln(w, runIndent(st.Content))
			}
			if st.Diff != "" {
				fmt.Fprintln(w, runIndent(st.Diff))
			}
		case agent.AskFollowup:
			var f agent.FollowupData
			_ = json.Unmarshal([]byte(m.Text), &f)
			fmt.Fprintf(w, "? %s\n", f.Question)
			for i, s := range f.Suggest {
				fmt.Fprintf(w, "  %d. %s\n", i+1, s.Answer)
			}
		default:
			fmt.Fprintf(w, "? %s %s\n", m.Ask, m.Text)
		}
		return
	}
	switch m.Say {
	case agent.SayAPIReqStarted:
		var info agent.APIReqInfo
		_ = json.Unmarshal([]byte(m.Text), &info)
		if info.Cost != nil && info.TokensIn != nil {
			fmt.Fprintf(w, "  (request: %d in, %d out, %d cache write, %d cache read, $%.4f)\n",
				*info.TokensIn, *info.TokensOut, *info.CacheWrites, *info.CacheReads, *info.Cost)
		} else if info.Cost == nil {
			fmt.Fprintln(w, "  ... asking the model")
		}
	case agent.SayText:
		fmt.Fprintln(w, m.Text)
	case agent.SayError:
		fmt.Fprintln(w, "! "+m.Text)
	case agent.SayCommandOutput:
		fmt.Fprintln(w, runIndent(m.Text))
	case agent.SayCompletionResult:
		fmt.Fprintln(w, "= "+m.Text)
	default:
		if m.Text != "" {
			fmt.Fprintf(w, "[%s] %s\n", m.Say, m.Text)
		}
	}
}

func runIndent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// runIntents lists the declared intents for the system prompt; a workspace
// without them shows none.
func runIntents(dir string) []prompts.Intent {
	in, _ := promptIntents(dir)
	return in
}

// answer feeds answers to the task's asks, one per ask, in order.
func (u *runUI) answer(ctx context.Context, task *agent.Task, cancel func()) {
	sc := bufio.NewScanner(u.in)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for {
		var ask agent.Message
		select {
		case ask = <-u.asks:
		case <-ctx.Done():
			return
		}
		var a agent.Answer
		for {
			if !sc.Scan() {
				if ask.Ask == agent.AskCompletionResult {
					a = agent.Answer{Response: agent.YesButtonClicked}
					break
				}
				u.warn(fmt.Sprintf("stdin ended while the task waits on ask %q; the task stays resumable", ask.Ask))
				cancel()
				return
			}
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var err error
			if u.tty {
				a, err = agent.ParseTerminalAnswer(ask, line)
			} else {
				a, err = agent.ParseAnswer([]byte(line))
			}
			if err != nil {
				u.warn(err.Error())
				continue
			}
			break
		}
		if err := task.Respond(a); err != nil {
			u.warn(err.Error())
		}
	}
}

// warn tells the person on stderr, so that stdout stays one format.
func (u *runUI) warn(msg string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.out.Flush()
	fmt.Fprintln(u.errw, "intentgate:", msg)
}

func (u *runUI) finish(res *agent.Result, errw io.Writer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	defer u.out.Flush()
	switch u.format {
	case "json":
		b, _ := json.Marshal(res)
		u.out.Write(append(b, '\n'))
	case "text":
		tu := res.TokenUsage
		fmt.Fprintf(u.out, "task %s: %s (%s)\ntokens: %d in, %d out, %d cache writes, %d cache reads; cost $%.4f\n",
			res.TaskID, res.Outcome, res.State.State, tu.TotalTokensIn, tu.TotalTokensOut, tu.TotalCacheWrites, tu.TotalCacheReads, tu.TotalCost)
	case "stream-json":
		b, _ := json.Marshal(map[string]any{"taskId": res.TaskID, "outcome": res.Outcome, "state": res.State,
			"tokenUsage": res.TokenUsage, "toolUsage": res.ToolUsage})
		fmt.Fprintf(errw, "%s\n", b)
	}
}

// governedAgent is what every way of starting intentgate's agent shares:
// the governed runtime of the workspace, the mode's system prompt and tools,
// the session's intent, and the task store under .orchestration/tasks/.
func governedAgent(rt *gate.Runtime) agent.Options {
	ws := rt.Workspace()
	var sessions *orchestration.SessionStore
	if st := rt.Stores(); st != nil {
		sessions = st.Sessions
	}
	return agent.Options{
		Runtime: rt, WS: ws, Workspace: ws.Dir,
		System: func(mode string) string {
			return prompts.System(prompts.SystemOptions{Mode: mode, Workspace: ws.Dir, Intents: runIntents(ws.Dir)}.WithHost())
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
		Store: &agent.Store{Dir: filepath.Join(ws.Dir, orchestration.DirName, "tasks")},
	}
}
