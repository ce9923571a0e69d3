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
	"github.com/intentgate/intentgate/tools"
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
	if e.Name == agent.EventCommandStatus && e.CommandStatus != nil {
		u.commandStatus(*e.CommandStatus)
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

// commandStatus shows a running command's status: on stream-json as Roo
// Code's webview message {"type":"commandExecutionStatus","text":JSON}; as
// text, the start of the command.
func (u *terminal) commandStatus(st tools.CommandExecutionStatus) {
	switch u.format {
	case "stream-json":
		text, _ := json.Marshal(st)
		b, _ := json.Marshal(map[string]string{"type": "commandExecutionStatus", "text": string(text)})
		u.out.Write(append(b, '\n'))
	case "text":
		switch st.Status {
		case tools.CommandStarted:
			fmt.Fprintf(u.out, "  $ %s (running, pid %d)\n", st.Command, st.PID)
		case tools.CommandFallback:
			fmt.Fprintln(u.out, "  (the command prints binary output: it is shown when the command ends)")
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// answer feeds answers to the task's asks, one per ask, in order. A
// running command's command_output ask is answered apart: on a terminal by
// the next line typed while it is the latest ask; on a pipe by a line
// {"type":"terminalOperation","terminalOperation":"continue"|"abort"}, as
// Roo Code's webview sends it, while askResponse lines stay for the asks
// that stop the task.
func (u *terminal) answer(ctx context.Context, task *agent.Task, cancel func()) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(u.in)
		sc.Buffer(make([]byte, 1<<16), 16<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()
	var queue []string // lines read while a command ran, for the next asks
	eof := false
	next := func() (string, bool) {
		if len(queue) > 0 {
			l := queue[0]
			queue = queue[1:]
			return l, true
		}
		if eof {
			return "", false
		}
		select {
		case l, ok := <-lines:
			if !ok {
				eof = true
			}
			return l, ok
		case <-ctx.Done():
			return "", false
		}
	}
	var pending *agent.Message // an ask that came while a command_output ask waited
	for {
		var ask agent.Message
		if pending != nil {
			ask, pending = *pending, nil
		} else {
			select {
			case ask = <-u.asks:
			case <-ctx.Done():
				return
			}
		}
		if ask.Ask == agent.AskCommandOutput {
			if len(queue) > 0 || eof {
				continue // what was typed is for the asks that follow
			}
			select {
			case l, ok := <-lines:
				if !ok {
					eof = true
					continue
				}
				u.commandOutput(task, ask, l, &queue)
			case a := <-u.asks:
				pending = &a // the command ended; its ask is withdrawn
			case <-ctx.Done():
				return
			}
			continue
		}
		var a agent.Answer
		stale := false
		for {
			line, ok := next()
			if ctx.Err() != nil {
				return
			}
			if cur, asking := task.Asking(); !asking || cur.TS != ask.TS {
				// Answered from elsewhere (an IPC client): what was
				// typed is for the next ask.
				if ok {
					queue = append([]string{line}, queue...)
				}
				stale = true
				break
			}
			if !ok {
				if ask.Ask == agent.AskCompletionResult {
					a = agent.Answer{Response: agent.YesButtonClicked}
					break
				}
				u.warn(fmt.Sprintf("stdin ended while the task waits on ask %q; the task stays resumable", ask.Ask))
				cancel()
				return
			}
			if _, isOp := terminalOperation(line); isOp {
				u.warn(fmt.Sprintf("no command waits for %s: the task waits on ask %q", line, ask.Ask))
				continue
			}
			var err error
			if u.tty {
				a, err = agent.ParseTerminalAnswer(ask, line)
			} else {
				a, err = parseAnswer(line, false)
			}
			if err != nil {
				u.warn(err.Error())
				continue
			}
			break
		}
		if stale {
			continue
		}
		if err := task.Respond(a); err != nil {
			u.warn(err.Error())
		}
	}
}

// commandOutput takes line, read while the command_output ask waited: on a
// pipe a terminalOperation steers the command and anything else waits for
// the next ask; on a terminal the line answers the ask.
func (u *terminal) commandOutput(task *agent.Task, ask agent.Message, line string, queue *[]string) {
	if op, ok := terminalOperation(line); ok {
		if err := task.TerminalOperation(op); err != nil {
			u.warn(fmt.Sprintf("terminalOperation %s: %v", op, err))
		}
		return
	}
	if !u.tty {
		*queue = append(*queue, line)
		return
	}
	a, err := agent.ParseTerminalAnswer(ask, line)
	if err == nil {
		err = task.Respond(a)
	}
	if err != nil {
		u.warn(err.Error())
	}
}

// terminalOperation reads a line {"type":"terminalOperation",
// "terminalOperation":"continue"|"abort"}.
func terminalOperation(line string) (string, bool) {
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, "terminalOperation") {
		return "", false
	}
	// Keys match exactly (a struct would take "tYpe" for "type").
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return "", false
	}
	var typ, op string
	if json.Unmarshal(m["type"], &typ) != nil || typ != "terminalOperation" || json.Unmarshal(m["terminalOperation"], &op) != nil {
		return "", false
	}
	return op, true
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
