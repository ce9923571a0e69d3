package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/engine"
)

// A command runs in the foreground of its call: the call returns when it
// ends. While it runs, the person may let it keep running (Roo Code's
// "Proceed While Running"): the call then returns at once, telling the
// model the command is still running, and the command goes on, still
// confined, until it exits or its task ends. What it changed is judged
// when it ends, against the picture taken before it started, by the same
// judgement as every command (CommandOptions.Detached). Or the person
// aborts it ("Kill Command"): it and everything it started are killed and
// the call returns as for any command that ended.

// Steering a running command.
const (
	steerContinue = "continue"
	steerAbort    = "abort"
)

// CommandControl receives each command started under a context made by
// WithCommandControl, to steer it while it runs.
type CommandControl struct {
	// Running is called, on the call's goroutine, once the command's
	// process runs.
	Running func(*LiveCommand)
}

type controlKey struct{}

// WithCommandControl returns a context under which execute_command hands
// each command it starts to cc.
func WithCommandControl(ctx context.Context, cc CommandControl) context.Context {
	return context.WithValue(ctx, controlKey{}, &cc)
}

// LiveCommand is a running command the person can steer. Its methods are
// safe for concurrent use.
type LiveCommand struct {
	// ExecutionID names the execution (the call id unless the stream
	// names it); Command is the command line; Dir where it runs.
	ExecutionID, Command, Dir string
	// PID is the process id of its shell (or of the sandbox's init).
	PID int

	lineLimit, charLimit int
	steer                chan string
	exited               chan struct{}
	done                 chan struct{}

	mu       sync.Mutex
	pending  []byte // output not retrieved yet, bounded
	dropped  int
	detached bool
	ended    bool
	report   string
}

// maxPending bounds the output a kept-running command keeps between two
// retrievals: its newest part.
const maxPending = 256 << 10

func newLiveCommand(id, command, dir string, pid, lineLimit, charLimit int) *LiveCommand {
	return &LiveCommand{ExecutionID: id, Command: command, Dir: dir, PID: pid,
		lineLimit: lineLimit, charLimit: charLimit, steer: make(chan string, 1), exited: make(chan struct{}), done: make(chan struct{})}
}

// Write takes the command's output as it comes.
func (l *LiveCommand) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, p...)
	if over := len(l.pending) - maxPending; over > 0 {
		l.dropped += over
		l.pending = append(l.pending[:0], l.pending[over:]...)
	}
	return len(p), nil
}

// send steers the command; false when it already ended or was steered.
func (l *LiveCommand) send(s string) bool {
	l.mu.Lock()
	ended := l.ended
	l.mu.Unlock()
	if ended {
		return false
	}
	select {
	case l.steer <- s:
		return true
	default:
		return false
	}
}

// Continue lets the command keep running: its call returns now, telling the
// model it is still running. It reports false when the command already
// ended, was let go or is being aborted.
func (l *LiveCommand) Continue() bool {
	l.mu.Lock()
	detached := l.detached
	l.mu.Unlock()
	return !detached && l.send(steerContinue)
}

// Abort kills the command and everything it started, in the foreground or
// kept running. It reports false when it already ended.
func (l *LiveCommand) Abort() bool { return l.send(steerAbort) }

// Done is closed when the command ended and, when it was kept running,
// its changes were judged.
func (l *LiveCommand) Done() <-chan struct{} { return l.done }

// Exited is closed when the command's process ended; Done follows once
// what it changed was judged.
func (l *LiveCommand) Exited() <-chan struct{} { return l.exited }

// Detached reports whether the person let the command keep running.
func (l *LiveCommand) Detached() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.detached
}

// Report is, once Done, what the model is told of how a kept-running
// command ended: its last output, how it ended, the files it changed and
// the judgement of those changes. Empty for a command that ended in the
// foreground (its call's result says it).
func (l *LiveCommand) Report() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.report
}

// NewOutput returns the output the command printed since the last call
// (compressed as the model reads it), and forgets it.
func (l *LiveCommand) NewOutput() string {
	l.mu.Lock()
	raw, dropped := string(l.pending), l.dropped
	l.pending, l.dropped = nil, 0
	l.mu.Unlock()
	if raw == "" {
		return ""
	}
	out := CompressTerminalOutput(raw, l.lineLimit, l.charLimit)
	if dropped > 0 {
		out = fmt.Sprintf("[... %d bytes of earlier output omitted ...]\n%s", dropped, out)
	}
	return out
}

var closeMu sync.Mutex

// exit closes Exited, once.
func (l *LiveCommand) exit() {
	closeMu.Lock()
	defer closeMu.Unlock()
	select {
	case <-l.exited:
	default:
		close(l.exited)
	}
}

func (l *LiveCommand) detach() {
	l.mu.Lock()
	l.detached = true
	l.mu.Unlock()
}

// end marks the command ended, with the report of a kept-running one.
func (l *LiveCommand) end(report string) {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	l.ended, l.report = true, report
	l.mu.Unlock()
	l.exit()
	close(l.done)
}

// stillRunning is what the model reads when the person let the command keep
// running, in Roo Code's words (with its two spaces when a directory
// follows).
func stillRunning(dir, output string) string {
	s := "Command is still running in terminal  from '" + filepath.ToSlash(dir) + "'."
	if output != "" {
		s += "\nHere's the output so far:\n" + output
	}
	return s + "\n\n" + StillRunningFuture
}

// StillRunningFuture ends the result of a command left running: the agent
// replaces it with the person's feedback when they gave some, as the
// reference does.
const StillRunningFuture = "You will be updated on the terminal status and new output in the future."

// keepRunning lets the started command p go on after its call returns: it
// returns the call's result, or nil when the command ended meanwhile (its
// call then reports it as usual). When the command ends, what it changed
// since before is judged by o.Detached and the report is kept in lc.
func (o CommandOptions) keepRunning(c *engine.Call, before *StoredSnapshot, p *process, lc *LiveCommand, out *CommandOutcome) *engine.Result {
	select {
	case <-p.exited:
		return nil
	default:
	}
	lc.detach()
	if o.KeptRunning != nil {
		o.KeptRunning(c)
	}
	so := lc.NewOutput()
	// The call as it stands now: the post-hooks of this call go on with
	// it while the command runs.
	cc := *c
	go func() {
		go func() {
			select {
			case s := <-lc.steer:
				if s == steerAbort {
					p.stop(stopAbort)
				}
			case <-p.exited:
			}
		}()
		o2 := *out
		var full string
		full, o2.Code, o2.Err = p.finish()
		lc.exit()
		o2.Output = lc.takeRaw()
		lc.end(o.judgeLater(&cc, before, &o2, full))
	}()
	return &engine.Result{Output: stillRunning(out.Dir, so),
		Data: map[string]any{"running": true, "execution_id": lc.ExecutionID}}
}

// judgeLater judges what a kept-running command changed since before, once
// it ended, and says so the way a command's result does; out holds the
// output the model has not read yet, full all of it (the writes the sandbox
// refused are read from there).
func (o CommandOptions) judgeLater(c *engine.Call, before *StoredSnapshot, out *CommandOutcome, full string) string {
	var r *engine.Result
	var err error
	if o.Detached != nil {
		// Not the call's context: the call returned long ago, and the
		// judgement must wait for the session's turn like any call.
		r, err = o.Detached(context.Background(), c, before, full)
	} else {
		var changes []engine.FileChange
		changes, err = Changes(c.WS.Dir, before)
		r = &engine.Result{Changes: changes}
	}
	if r == nil {
		r = &engine.Result{}
	}
	rep := out.Report(r.Changes)
	if r.Output != "" {
		if !strings.HasSuffix(rep, "\n") {
			rep += "\n"
		}
		rep += r.Output
	}
	if err != nil {
		if !strings.HasSuffix(rep, "\n") {
			rep += "\n"
		}
		rep += "warning: " + err.Error() + "\n"
	}
	return rep
}

// takeRaw returns the output not retrieved yet, as printed, and forgets it.
func (l *LiveCommand) takeRaw() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	raw := string(l.pending)
	if l.dropped > 0 {
		raw = fmt.Sprintf("[... %d bytes of earlier output omitted ...]\n%s", l.dropped, raw)
	}
	l.pending, l.dropped = nil, 0
	return raw
}
