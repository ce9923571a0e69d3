package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/tools"
)

// A task's commands, as Roo Code runs them: a command's statuses stream
// while it runs (commandExecutionStatus events); once it has run for
// CommandAskDelay, ask command_output lets the person let it keep running
// (yes, or a message that the model is given as feedback) or abort it (no).
// The ask does not stop the task, and it is withdrawn, unanswered, when the
// command ends first. A command left running is the task's until it exits
// or the task ends (then it is killed): its new output and, once it ended,
// how it ended and the judgement of what it changed reach the model in the
// environment details of the following requests, under "Actively Running
// Terminals" and "Inactive Terminals with Completed Process Output".

// Terminal operations, as Roo Code's webview names them.
const (
	TerminalContinue = "continue"
	TerminalAbort    = "abort"
)

// commandContext is the context execute_command runs under: its statuses
// become events, and it is handed to the task to be steered. done stops
// the command_output ask and returns the person's feedback (when they let
// the command keep running with a message) and whether the command was
// left running.
func (p *presenter) commandContext(ctx context.Context) (context.Context, func() (feedback string, kept bool)) {
	t := p.t
	var (
		mu       sync.Mutex
		lc       *tools.LiveCommand
		feedback string
		stop     = make(chan struct{})
		asked    sync.WaitGroup
	)
	ctx = tools.WithCommandStream(ctx, tools.CommandStream{Func: func(s tools.CommandExecutionStatus) {
		st := s
		t.emit(Event{Name: EventCommandStatus, State: t.State(), CommandStatus: &st})
	}})
	ctx = tools.WithCommandControl(ctx, tools.CommandControl{Running: func(l *tools.LiveCommand) {
		mu.Lock()
		lc = l
		mu.Unlock()
		t.mu.Lock()
		t.fg = l
		t.mu.Unlock()
		asked.Add(1)
		go func() {
			defer asked.Done()
			if fb, ok := t.commandOutputAsk(l, stop); ok {
				mu.Lock()
				feedback = fb
				mu.Unlock()
			}
		}()
	}})
	return ctx, func() (string, bool) {
		close(stop)
		asked.Wait()
		t.mu.Lock()
		t.fg = nil
		t.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		if lc == nil || !lc.Detached() {
			return "", false
		}
		t.mu.Lock()
		t.bg = append(t.bg, lc)
		t.mu.Unlock()
		return feedback, true
	}
}

// commandOutputAsk asks command_output once the command l has run for the
// task's CommandAskDelay, and steers it with the answer: yes lets it keep
// running, a message too (the message is returned, for the model), no
// aborts it. The ask is withdrawn when stop closes first.
func (t *Task) commandOutputAsk(l *tools.LiveCommand, stop <-chan struct{}) (string, bool) {
	timer := time.NewTimer(t.opts.CommandAskDelay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-stop:
		return "", false
	case <-l.Done():
		return "", false
	}
	ch := make(chan Answer, 1)
	t.mu.Lock()
	t.nb = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.nb = nil
		t.mu.Unlock()
	}()
	t.add(Message{TS: t.ts(), Type: TypeAsk, Ask: AskCommandOutput})
	select {
	case a := <-ch:
		t.emit(Event{Name: EventAskResponded, State: t.State()})
		switch a.Response {
		case NoButtonClicked:
			l.Abort()
			return "", false
		case MessageResponse:
			return a.Text, l.Continue() && a.Text != ""
		default:
			l.Continue()
			return "", false
		}
	case <-stop:
		return "", false
	}
}

// ErrNoCommand is returned by TerminalOperation when no command runs in the
// foreground.
var ErrNoCommand = errors.New("no command is running in the foreground")

// TerminalOperation steers the command the task waits for, as Roo Code's
// terminalOperation message does: "continue" lets it keep running while
// the task goes on, "abort" kills it.
func (t *Task) TerminalOperation(op string) error {
	t.mu.Lock()
	child, fg := t.child, t.fg
	t.mu.Unlock()
	if child != nil {
		return child.TerminalOperation(op)
	}
	if op != TerminalContinue && op != TerminalAbort {
		return fmt.Errorf("terminalOperation %q: use continue or abort", op)
	}
	if fg == nil {
		return ErrNoCommand
	}
	var ok bool
	if op == TerminalAbort {
		ok = fg.Abort()
	} else {
		ok = fg.Continue()
	}
	if !ok {
		return errors.New("the command already ended or was already steered")
	}
	return nil
}

// terminals is the environment details' account of the commands left
// running: the new output of those still running, and how the others ended
// (each told once, and shown to the person as command_output).
func (t *Task) terminals() string {
	t.mu.Lock()
	bg := append([]*tools.LiveCommand(nil), t.bg...)
	t.mu.Unlock()
	var running, ended strings.Builder
	var gone []*tools.LiveCommand
	for _, l := range bg {
		select {
		case <-l.Exited():
			// Its judgement is under way and needs nothing of the
			// task: what it says is told now, not a request later.
			<-l.Done()
		default:
		}
		select {
		case <-l.Done():
			gone = append(gone, l)
			rep := l.Report()
			t.say(SayCommandOutput, rep)
			fmt.Fprintf(&ended, "## Command `%s` (execution %s, ended)\n### Working Directory: `%s`\n%s\n", l.Command, l.ExecutionID, filepath.ToSlash(l.Dir), strings.TrimRight(rep, "\n"))
		default:
			out := l.NewOutput()
			if out == "" {
				out = "(no new output)"
			}
			fmt.Fprintf(&running, "## Command `%s` (execution %s, still running)\n### Working Directory: `%s`\n### New Output\n%s\n", l.Command, l.ExecutionID, filepath.ToSlash(l.Dir), strings.TrimRight(out, "\n"))
		}
	}
	if len(gone) > 0 {
		t.mu.Lock()
		kept := t.bg[:0]
		for _, l := range t.bg {
			if !containsLive(gone, l) {
				kept = append(kept, l)
			}
		}
		t.bg = kept
		t.mu.Unlock()
	}
	var b strings.Builder
	b.WriteString("# Actively Running Terminals\n")
	if running.Len() == 0 {
		b.WriteString("(none)\n")
	}
	b.WriteString(running.String())
	if ended.Len() > 0 {
		b.WriteString("\n# Inactive Terminals with Completed Process Output\n")
		b.WriteString(ended.String())
	}
	return b.String()
}

func containsLive(list []*tools.LiveCommand, l *tools.LiveCommand) bool {
	for _, x := range list {
		if x == l {
			return true
		}
	}
	return false
}

// endCommands kills the commands left running when the task ends and waits
// until each was judged: what they changed is recorded like any command's.
func (t *Task) endCommands() {
	t.mu.Lock()
	bg := t.bg
	t.bg = nil
	t.mu.Unlock()
	for _, l := range bg {
		l.Abort()
	}
	for _, l := range bg {
		<-l.Done()
	}
}

// Asking returns the ask the task (or its running subtask) waits on, if
// any: an answer that comes from elsewhere (an IPC client) ends the wait,
// and a front end that took the ask must not answer it again.
func (t *Task) Asking() (Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.child != nil {
		c := t.child
		t.mu.Unlock()
		m, ok := c.Asking()
		t.mu.Lock()
		return m, ok
	}
	if !t.asking || len(t.messages) == 0 {
		return Message{}, false
	}
	last := t.messages[len(t.messages)-1]
	return last, last.Type == TypeAsk
}
