package agentrun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/agent"
)

// terminal shows the task on a terminal or as JSON, and collects the
// answers to its asks.
type terminal struct {
	format string
	mu     sync.Mutex
	out    *bufio.Writer
	errw   io.Writer
	in     io.Reader
	tty    bool
	asks   chan agent.Message
}

func newTerminal(format string, out, errw io.Writer, in io.Reader) *terminal {
	u := &terminal{format: format, out: bufio.NewWriter(out), errw: errw, in: in, asks: make(chan agent.Message, 16)}
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			u.tty = true
		}
	}
	return u
}

func (u *terminal) event(e agent.Event) {
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

func (u *terminal) text(m agent.Message, taskID string) {
	w := u.out
	if m.Type == agent.TypeAsk {
		switch m.Ask {
		case agent.AskCommand:
			fmt.Fprintf(w, "? run this command: %s\n", m.Text)
		case agent.AskTool:
			var st agent.SayTool
			_ = json.Unmarshal([]byte(m.Text), &st)
			fmt.Fprintf(w, "? %s %s\n", st.Tool, st.Path)
			if st.Content != "" {
				fmt.Fprintln(w, indent(st.Content))
			}
			if st.Diff != "" {
				fmt.Fprintln(w, indent(st.Diff))
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
		if u.tty {
			fmt.Fprint(w, "[y] approve  [n] reject  or type feedback: ")
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
		fmt.Fprintln(w, indent(m.Text))
	case agent.SayCompletionResult:
		fmt.Fprintln(w, "= "+m.Text)
	default:
		if m.Text != "" {
			fmt.Fprintf(w, "[%s] %s\n", m.Say, m.Text)
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// answer feeds answers to the task's asks, one per ask, in order.
func (u *terminal) answer(ctx context.Context, task *agent.Task, cancel func()) {
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
			if a, err = parseAnswer(line, u.tty); err != nil {
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
func (u *terminal) warn(msg string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.out.Flush()
	fmt.Fprintln(u.errw, "intentgate:", msg)
}

// parseAnswer reads a JSON answer line, or on a terminal a typed answer.
func parseAnswer(line string, tty bool) (agent.Answer, error) {
	if !tty || strings.HasPrefix(line, "{") {
		return agent.ParseAnswer([]byte(line))
	}
	switch {
	case line == "y" || line == "yes":
		return agent.Answer{Response: agent.YesButtonClicked}, nil
	case line == "n" || line == "no":
		return agent.Answer{Response: agent.NoButtonClicked}, nil
	case strings.HasPrefix(line, "y:"):
		return agent.Answer{Response: agent.YesButtonClicked, Text: strings.TrimSpace(line[2:])}, nil
	}
	return agent.Answer{Response: agent.MessageResponse, Text: line}, nil
}

func (u *terminal) finish(res *agent.Result, errw io.Writer) {
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
