package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/sandbox"
)

// CommandOptions bound execute_command.
type CommandOptions struct {
	Timeout   time.Duration // default 2 minutes
	OutputCap int           // bytes of output kept before compression; default 1 MiB
	// LineLimit and CharLimit bound the output the model reads, after
	// compression (Roo Code's terminal settings); 500 lines and 50,000
	// characters when 0.
	LineLimit, CharLimit int
	// Settle is told of what the command changed, before the post-hooks
	// see the result: the governed runtime judges the changes there, applies
	// on_violation and adds what the model must be told to r.Output; an
	// error is added to the output as a warning. Nil
	// leaves the changes unjudged (they are still judged by the post-hooks).
	Settle func(ctx context.Context, c *engine.Call, before *StoredSnapshot, r *engine.Result) error
	// Confine gives the kernel confinement of the call's command (what it
	// may write: the static roots of the session's intent). Nil confines
	// it to the workspace, governance paths read-only.
	Confine func(c *engine.Call) (*sandbox.Policy, error)
	// Picture takes the picture of the workspace before the command; nil
	// is Picture of the workspace.
	Picture func() (*StoredSnapshot, error)
	// Detached judges what a command the person let keep running changed
	// since the picture before, once it ended (ObserveCommand's contract:
	// output is what it printed; the result's Output is what the model
	// is told besides the files changed). Nil only lists the changes.
	Detached func(ctx context.Context, c *engine.Call, before *StoredSnapshot, output string) (*engine.Result, error)
	// KeptRunning, when not nil, is told that c's command keeps running
	// after its call returns, before it returns; Detached follows once
	// the command ended.
	KeptRunning func(c *engine.Call)
}

// confine is the policy of c's command, or a denial saying why it cannot
// be confined.
func (o CommandOptions) confine(c *engine.Call) (*sandbox.Policy, error) {
	var pol *sandbox.Policy
	var err error
	if o.Confine != nil {
		pol, err = o.Confine(c)
	} else {
		pol, err = sandbox.ForScope(c.WS.Dir, []string{"**"}, sandbox.Config{})
	}
	if err == nil {
		if mech, why := sandbox.Available(); mech == sandbox.None && !pol.AllowUnconfined {
			err = fmt.Errorf("%w: %s", sandbox.ErrUnavailable, why)
		}
	}
	if err != nil {
		return nil, &engine.Denial{Code: engine.HookError, Tool: c.Tool,
			Message: "the command cannot be confined, so it did not run: " + err.Error(),
			Hint:    "this is not about your command; tell the user (a team that accepts running commands unconfined sets sandbox.allow_unconfined: true in .orchestration/config.yaml)"}
	}
	return pol, nil
}

// ExecuteCommand is execute_command(command, cwd?). A command line cannot be
// judged by parsing it (echo > f, sed -i, a Makefile...), so what it changed
// is found by comparing the workspace before and after it runs; the changes
// go into the result for the post-hooks to check against the scope and trace.
func ExecuteCommand(opts CommandOptions) engine.Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.OutputCap <= 0 {
		opts.OutputCap = 1 << 20
	}
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		req, err := ParseCommand(c, opts.Timeout)
		if err != nil {
			return nil, err
		}
		if req.Policy, err = opts.confine(c); err != nil {
			return nil, err
		}
		var before *StoredSnapshot
		if opts.Picture != nil {
			before, err = opts.Picture()
		} else {
			before, err = Picture(c.WS.Dir)
		}
		if err != nil {
			return nil, fmt.Errorf("snapshot before the command: %w", err)
		}
		live := newCommandStream(ctx, c.ID, opts.LineLimit, opts.CharLimit)
		cc, _ := ctx.Value(controlKey{}).(*CommandControl)
		var lc *LiveCommand
		var extra io.Writer
		if cc != nil && cc.Running != nil {
			id := c.ID
			if live != nil {
				id = live.id
			}
			lc = newLiveCommand(id, req.Command, req.Dir, 0, opts.LineLimit, opts.CharLimit)
			extra = lc
		}
		out := &CommandOutcome{Code: -1, Dir: req.Dir, Timeout: req.Timeout, LineLimit: opts.LineLimit, CharLimit: opts.CharLimit}
		p, err := startProcess(ctx, req.Policy, req.Dir, req.Command, opts.OutputCap, live, extra)
		if err != nil {
			out.Err = err
		} else {
			var steer chan string
			if lc != nil {
				lc.PID = p.cmd.Process.Pid
				cc.Running(lc)
				steer = lc.steer
			}
			if p.foreground(ctx, req.Timeout, steer) == steerContinue {
				if r := opts.keepRunning(c, before, p, lc, out); r != nil {
					return r, nil
				}
			}
			out.Output, out.Code, out.Err = p.finish()
		}
		if lc != nil {
			lc.end("")
		}
		changes, err := Changes(c.WS.Dir, before)
		if err != nil {
			return nil, fmt.Errorf("snapshot after the command: %w", err)
		}
		r := &engine.Result{Data: map[string]any{"exit_code": out.Code}, Changes: changes}
		if refused := sandbox.Refusals(out.Output); len(refused) > 0 {
			r.Data["refused_writes"] = refused
		}
		if opts.Settle != nil {
			// The command ran: what could not be settled is told, not
			// returned as a failure that would hide what it did. Settle
			// may leave out changes that were not the command's.
			serr := opts.Settle(ctx, c, before, r)
			rep := out.Report(r.Changes)
			if r.Output != "" && !strings.HasSuffix(rep, "\n") {
				rep += "\n"
			}
			r.Output = rep + r.Output
			if serr != nil {
				r.Output += "\nwarning: " + serr.Error() + "\n"
			}
		} else {
			r.Output = out.Report(changes)
		}
		return r, nil
	})
}

// CommandRequest is an execute_command call, checked.
type CommandRequest struct {
	Command string
	Dir     string // absolute directory the command runs in
	Timeout time.Duration
	// Policy confines the command (sandbox.Shell); nil runs it through
	// the plain platform shell, which only a caller that confines it
	// otherwise may ask for.
	Policy *sandbox.Policy
}

// ParseCommand reads and checks the arguments of an execute_command call:
// command, cwd (a directory of the workspace) and timeout (seconds, never
// beyond limit).
func ParseCommand(c *engine.Call, limit time.Duration) (*CommandRequest, error) {
	command, err := c.Require("command")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(command) == "" {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "command", Message: "the command is empty"}
	}
	req := &CommandRequest{Command: command, Dir: c.WS.Dir, Timeout: limit}
	if cwd, ok, err := c.String("cwd"); err != nil {
		return nil, err
	} else if cwd = dirPath(cwd); ok && cwd != "" && cwd != "." && cwd != c.WS.Dir {
		rel, err := c.WS.Canonical(cwd)
		if err != nil {
			return nil, err
		}
		fi, err := c.WS.Stat(rel)
		if err != nil || !fi.IsDir() {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "cwd", Path: rel,
				Message: rel + " is not a directory in the workspace"}
		}
		req.Dir = c.WS.Abs(rel)
	}
	if s, ok, _ := c.String("timeout"); ok {
		if secs, err := strconv.Atoi(s); err == nil && secs > 0 && time.Duration(secs)*time.Second < req.Timeout {
			req.Timeout = time.Duration(secs) * time.Second
		}
	}
	return req, nil
}

// CommandOutcome is how a command ended.
type CommandOutcome struct {
	Output  string // stdout and stderr, capped
	Code    int    // exit status; -1 when it has none
	Dir     string // where it ran
	Timeout time.Duration
	Err     error // context.DeadlineExceeded at the timeout; another error if it could not run
	// LineLimit and CharLimit bound the output Report shows, after
	// compression; Roo Code's defaults when 0.
	LineLimit, CharLimit int
}

// RunCommand runs req through the platform shell. It is the one place a
// governed command is executed.
func RunCommand(ctx context.Context, req *CommandRequest, outputCap int) *CommandOutcome {
	out, code, err := run(ctx, req.Policy, req.Dir, req.Command, req.Timeout, outputCap)
	return &CommandOutcome{Output: out, Code: code, Dir: req.Dir, Timeout: req.Timeout, Err: err}
}

// Report is what the model is told of the command: how it ended and its
// output, compressed, in Roo Code's words, then the files it changed.
func (o *CommandOutcome) Report(changes []engine.FileChange) string {
	lines, chars := o.LineLimit, o.CharLimit
	if lines <= 0 {
		lines = DefaultTerminalLineLimit
	}
	if chars <= 0 {
		chars = DefaultTerminalCharLimit
	}
	var b strings.Builder
	b.WriteString(commandResultText(o.Dir, o.Output, o.Code, o.Err, o.Timeout, lines, chars))
	if len(changes) > 0 {
		b.WriteString("Files changed:\n")
		for _, ch := range changes {
			verb := "modified"
			switch {
			case ch.Deleted:
				verb = "deleted"
			case !ch.Existed:
				verb = "created"
			}
			fmt.Fprintf(&b, "  %s %s\n", verb, ch.Path)
		}
	}
	return b.String()
}

// dirPath drops what only says "a directory" from the end of cwd ("src/",
// "src/."), which Canonical refuses for a file path.
func dirPath(cwd string) string {
	for {
		t := strings.TrimRightFunc(cwd, func(r rune) bool { return r == '/' || r == filepath.Separator })
		t = strings.TrimSuffix(t, "/.")
		t = strings.TrimSuffix(t, string(filepath.Separator)+".")
		if t == cwd || t == "" {
			return cwd
		}
		cwd = t
	}
}

// run runs command through the platform shell in dir, confined by pol;
// everything it started ends with it, or at the timeout. Output beyond
// limit keeps its head and tail.
func run(ctx context.Context, pol *sandbox.Policy, dir, command string, timeout time.Duration, limit int) (string, int, error) {
	p, err := startProcess(ctx, pol, dir, command, limit, nil, nil)
	if err != nil {
		return "", -1, err
	}
	p.foreground(ctx, timeout, nil)
	return p.finish()
}

// process is a started command: it runs until it exits or is killed, with
// a reason (stopTimeout, stopCancel, stopAbort) that says how its end is
// reported.
type process struct {
	cmd     *exec.Cmd
	cleanup func()
	buf     *capBuffer
	live    *commandStream
	command string
	exited  chan struct{} // closed when Wait returned
	waitErr error
	kill    context.CancelFunc

	mu     sync.Mutex
	reason error // why it was killed; nil when it ended by itself
}

// startProcess starts command. The process does not end with ctx: its
// owner ends it with stop, so that a command the person lets keep running
// outlives the call that started it. extra, when not nil, also receives
// the output.
func startProcess(ctx context.Context, pol *sandbox.Policy, dir, command string, limit int, live *commandStream, extra io.Writer) (*process, error) {
	pctx, kill := context.WithCancel(context.WithoutCancel(ctx))
	cmd, cleanup, err := sandbox.Shell(pctx, pol, dir, command)
	if err != nil {
		kill()
		return nil, err
	}
	p := &process{cmd: cmd, cleanup: cleanup, buf: &capBuffer{limit: limit}, live: live, command: command,
		exited: make(chan struct{}), kill: kill}
	ws := []io.Writer{p.buf, live}
	if extra != nil {
		ws = append(ws, extra)
	}
	out := io.MultiWriter(ws...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		kill()
		cleanup()
		return nil, err
	}
	live.start(cmd.Process.Pid, command)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Reasons a process was stopped.
var (
	stopTimeout = errCommandTimeout
	stopCancel  = context.Canceled
	stopAbort   = &signalError{name: "SIGKILL"} // the person's "kill command", in Roo's words
)

// stop kills the process and everything it started, for reason (the first
// reason given is kept).
func (p *process) stop(reason error) {
	p.mu.Lock()
	if p.reason == nil {
		p.reason = reason
	}
	p.mu.Unlock()
	p.kill()
}

// foreground waits while the call that started the process waits for it:
// until it exits, ctx ends, the timeout passes, or steer (when not nil)
// says otherwise. It returns what steer said ("" when the process ended
// or was stopped).
func (p *process) foreground(ctx context.Context, timeout time.Duration, steer <-chan string) string {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-p.exited:
			return ""
		case <-ctx.Done():
			p.stop(stopCancel)
		case <-timer.C:
			p.stop(stopTimeout)
		case s := <-steer:
			if s == steerAbort {
				p.stop(stopAbort)
				continue
			}
			return s
		}
		<-p.exited
		return ""
	}
}

// finish waits for the process, ends whatever it left running and says how
// it ended: its output, its exit code (-1 when it has none) and an error
// for a command that did not exit by itself.
func (p *process) finish() (string, int, error) {
	<-p.exited
	defer p.cleanup()
	defer p.kill()
	cmd := p.cmd
	// A process the command left running in the background could change
	// the workspace after the snapshot that judges the command: end the
	// command's whole process group with it.
	killGroup(cmd)
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	p.mu.Lock()
	reason := p.reason
	p.mu.Unlock()
	live := p.live
	if reason != nil {
		live.end(nil, reason == stopTimeout)
		return p.buf.String(), code, reason
	}
	err := p.waitErr
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
		if sig, ok := exitSignal(ee.ProcessState); ok {
			err = sig
		} else if n, ok := sandbox.ExitSignal(cmd); ok {
			// Confined, the shell's init tells how the shell died.
			err = &signalError{name: signalName(n)}
		}
	}
	if cmd.ProcessState != nil {
		var exit *int
		if err == nil {
			exit = &code
		}
		live.end(exit, false)
	}
	return p.buf.String(), code, err
}

// errCommandTimeout is a command stopped at its time limit.
var errCommandTimeout = context.DeadlineExceeded

// capBuffer keeps the first and last limit/2 bytes of what is written.
type capBuffer struct {
	mu      sync.Mutex
	limit   int
	head    bytes.Buffer
	tail    []byte
	dropped int
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	half := b.limit / 2
	if room := half - b.head.Len(); room > 0 {
		k := min(room, len(p))
		b.head.Write(p[:k])
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - half; over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *capBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return b.head.String() + string(b.tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes of output omitted ...]\n%s", b.head.String(), b.dropped, b.tail)
}
