package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	OutputCap int           // bytes of output kept; default 64 KiB
	// Confine gives the kernel confinement of the call's command (what it
	// may write: the static roots of the session's intent). Nil confines
	// it to the workspace, governance paths read-only.
	Confine func(c *engine.Call) (*sandbox.Policy, error)
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
		opts.OutputCap = 64 << 10
	}
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		command, err := c.Require("command")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(command) == "" {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "command", Message: "the command is empty"}
		}
		dir := c.WS.Dir
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
			dir = c.WS.Abs(rel)
		}
		timeout := opts.Timeout
		if s, ok, _ := c.String("timeout"); ok {
			if secs, err := strconv.Atoi(s); err == nil && secs > 0 && time.Duration(secs)*time.Second < timeout {
				timeout = time.Duration(secs) * time.Second
			}
		}

		pol, err := opts.confine(c)
		if err != nil {
			return nil, err
		}
		before, err := TakeSnapshot(c.WS.Dir)
		if err != nil {
			return nil, fmt.Errorf("snapshot before the command: %w", err)
		}
		out, code, runErr := run(ctx, pol, dir, command, timeout, opts.OutputCap)
		after, err := TakeSnapshot(c.WS.Dir)
		if err != nil {
			return nil, fmt.Errorf("snapshot after the command: %w", err)
		}
		r := &engine.Result{Data: map[string]any{"exit_code": code}}
		if refused := sandbox.Refusals(out); len(refused) > 0 {
			r.Data["refused_writes"] = refused
		}
		for _, ch := range before.Diff(after) {
			fc := engine.FileChange{Path: ch.Path, Before: ch.Before, After: ch.After,
				Existed: ch.Existed, Deleted: ch.Deleted}
			if !ch.Known {
				fc.BeforeUnknown = true
				fc.Reason = "old content unknown (file too large to snapshot)"
			}
			if ch.Link != "" {
				fc.Reason = "now a symbolic link to " + ch.Link
			}
			if ch.Unreadable != "" {
				fc.Uninspected = true
				fc.Reason = "changed, but its new content cannot be read: " + ch.Unreadable
			}
			r.Changes = append(r.Changes, fc)
		}
		// What the walk could not see may hide any change at all.
		for _, u := range after.Unseen() {
			r.Changes = append(r.Changes, engine.FileChange{Path: u.Path, Uninspected: true,
				Reason: "cannot be inspected after the command: " + u.Why})
		}
		var b strings.Builder
		switch {
		case errors.Is(runErr, context.DeadlineExceeded):
			fmt.Fprintf(&b, "Command timed out after %s and was stopped.\n", timeout)
		case runErr != nil:
			fmt.Fprintf(&b, "Command could not run: %v\n", runErr)
		default:
			fmt.Fprintf(&b, "Command exited with code %d.\n", code)
		}
		if out != "" {
			b.WriteString("Output:\n")
			b.WriteString(out)
			if !strings.HasSuffix(out, "\n") {
				b.WriteByte('\n')
			}
		}
		if len(r.Changes) > 0 {
			b.WriteString("Files changed:\n")
			for _, ch := range r.Changes {
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
		r.Output = b.String()
		return r, nil
	})
}

// dirPath drops what only says "a directory" from the end of cwd ("src/",
// "src/."), which Canonical refuses for a file path.
func dirPath(cwd string) string {
	for {
		t := strings.TrimRight(cwd, `/`+string(filepath.Separator))
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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, cleanup, err := sandbox.Shell(ctx, pol, dir, command)
	if err != nil {
		return "", -1, err
	}
	defer cleanup()
	buf := &capBuffer{limit: limit}
	cmd.Stdout, cmd.Stderr = buf, buf
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	// A process the command left running in the background could change
	// the workspace after the snapshot that judges the command: end the
	// command's whole process group with it.
	killGroup(cmd)
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return buf.String(), code, context.DeadlineExceeded
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	return buf.String(), code, err
}

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
