package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Statuses of a running command, as @roo-code/types' commandExecutionStatusSchema
// names them.
const (
	CommandStarted = "started"
	CommandOutput  = "output"
	CommandExited  = "exited"
	CommandTimeout = "timeout"
	// CommandFallback says the output can no longer be streamed (Roo's
	// "the live terminal failed"): intentgate sends it when the command
	// prints binary output, which is not shown as it comes; the result
	// still carries the output, and exited still follows.
	CommandFallback = "fallback"
)

// CommandExecutionStatus is one event of a running command. Its JSON is
// Roo Code's CommandExecutionStatus: every status has executionId; started
// has pid and command, output the whole output so far (compressed), exited
// the exit code when there is one.
type CommandExecutionStatus struct {
	ExecutionID string
	Status      string
	PID         int    // started; 0 when unknown
	Command     string // started
	Output      string // output
	ExitCode    *int   // exited; nil when the process was killed by a signal
}

// MarshalJSON writes only the fields the status carries.
func (s CommandExecutionStatus) MarshalJSON() ([]byte, error) {
	m := map[string]any{"executionId": s.ExecutionID, "status": s.Status}
	switch s.Status {
	case CommandStarted:
		m["command"] = s.Command
		if s.PID > 0 {
			m["pid"] = s.PID
		}
	case CommandOutput:
		m["output"] = s.Output
	case CommandExited:
		if s.ExitCode != nil {
			m["exitCode"] = *s.ExitCode
		}
	}
	return json.Marshal(m)
}

// CommandStream receives the statuses of the commands run with a context
// made by WithCommandStream. Calls come from the command's goroutines, one
// at a time and in order; Func must not block for long.
type CommandStream struct {
	// ExecutionID names the execution; the call id when empty.
	ExecutionID string
	// Func is called with each status.
	Func func(CommandExecutionStatus)
	// Interval is the least time between two output statuses (the last
	// output is always sent before exited); 100ms when 0.
	Interval time.Duration
}

type streamKey struct{}

// WithCommandStream returns a context under which execute_command reports
// its progress to s. The agent loop passes it to Dispatch to show a command
// live (Roo's commandExecutionStatus messages).
func WithCommandStream(ctx context.Context, s CommandStream) context.Context {
	return context.WithValue(ctx, streamKey{}, &s)
}

// commandStream is the stream of one execution; a nil one does nothing.
type commandStream struct {
	s         *CommandStream
	id        string
	lineLimit int
	charLimit int

	mu       sync.Mutex
	started  bool
	fallback bool   // output is no longer streamed
	raw      []byte // output so far, bounded: head and tail
	last     time.Time
	dirty    bool
}

// maxStreamRaw bounds the output a stream keeps to compress.
const maxStreamRaw = 1 << 20

func newCommandStream(ctx context.Context, callID string, lineLimit, charLimit int) *commandStream {
	s, _ := ctx.Value(streamKey{}).(*CommandStream)
	if s == nil || s.Func == nil {
		return nil
	}
	id := s.ExecutionID
	if id == "" {
		id = callID
	}
	return &commandStream{s: s, id: id, lineLimit: lineLimit, charLimit: charLimit}
}

func (cs *commandStream) start(pid int, command string) {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.started = true
	cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandStarted, PID: pid, Command: command})
	if cs.fallback {
		cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandFallback})
	}
}

// Write takes the command's output as it comes.
func (cs *commandStream) Write(p []byte) (int, error) {
	if cs == nil {
		return len(p), nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.fallback {
		return len(p), nil
	}
	if bytes.IndexByte(p, 0) >= 0 {
		// Binary output: what it would show is noise.
		cs.fallback, cs.dirty = true, false
		if cs.started {
			cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandFallback})
		}
		return len(p), nil
	}
	cs.raw = append(cs.raw, p...)
	if over := len(cs.raw) - maxStreamRaw; over > 0 {
		// Keep the head's first half and the newest output.
		half := maxStreamRaw / 2
		cs.raw = append(cs.raw[:half], cs.raw[half+over:]...)
	}
	cs.dirty = true
	interval := cs.s.Interval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	if cs.started && time.Since(cs.last) >= interval {
		cs.flushLocked()
	}
	return len(p), nil
}

func (cs *commandStream) flushLocked() {
	if !cs.dirty {
		return
	}
	cs.dirty = false
	cs.last = time.Now()
	out := CompressTerminalOutput(string(cs.raw), cs.lineLimit, cs.charLimit)
	cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandOutput, Output: out})
}

// end sends the last output, then exited (or timeout).
func (cs *commandStream) end(exitCode *int, timedOut bool) {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.started {
		cs.flushLocked()
	}
	if timedOut {
		cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandTimeout})
		return
	}
	cs.s.Func(CommandExecutionStatus{ExecutionID: cs.id, Status: CommandExited, ExitCode: exitCode})
}
