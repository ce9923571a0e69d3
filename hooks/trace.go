package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// TraceConfig is what the trace policy records into.
type TraceConfig struct {
	Ledger  *orchestration.Ledger
	Git     *orchestration.Git
	Version string // intentgate's version, for the records' tool field
	// Then is told of every record after it is appended (the intent map).
	Then []Recorder
}

// Recorder is told of each record appended to the ledger, with its line.
type Recorder interface {
	Recorded(rec *orchestration.Record, line []byte) error
}

// ContentRecorder is a Recorder that also takes, for the record of a change,
// the content the change left (hashing to rec's after_sha256), so that it
// need not read the file again, which may have changed since. after is the
// change's new content, which nobody modifies afterwards: a recorder may
// keep it without copying.
type ContentRecorder interface {
	Recorder
	RecordedContent(rec *orchestration.Record, line, after []byte) error
}

// BatchingRecorder is a Recorder that may hold back work for a while (the
// intent map batches its updates): Flush does it now, Close does it and
// stops batching.
type BatchingRecorder interface {
	Recorder
	Flush() error
	Close() error
}

// Trace is the recording policy: after a change it appends one ledger record
// per changed file, with the changed line ranges and their content hashes,
// and tells the recorders that follow it (the intent map); every refusal is recorded too, since
// refusals are evidence.
type Trace struct {
	cfg TraceConfig
}

// NewTrace returns the trace policy. It first records what a crash between a
// change and its record left unrecorded (Recover); failing to is reported on
// stderr, and the entries stay for the next open and for verify.
func NewTrace(cfg TraceConfig) *Trace {
	t := &Trace{cfg: cfg}
	if cfg.Ledger != nil {
		if err := t.Recover(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "intentgate: changes a crash left unrecorded could not be recorded yet: %v\n", err)
		}
	}
	return t
}

// Flush has the recorders do what they held back (the intent map's batch).
func (t *Trace) Flush() error { return t.eachBatching(BatchingRecorder.Flush) }

// Close flushes the recorders and stops their batching: call it when the
// process is done with the workspace, so that nothing recorded waits for
// another process to show it.
func (t *Trace) Close() error { return t.eachBatching(BatchingRecorder.Close) }

// eachBatching runs do on every recorder that batches, and joins their errors.
func (t *Trace) eachBatching(do func(BatchingRecorder) error) error {
	var errs []error
	for _, r := range t.cfg.Then {
		if b, ok := r.(BatchingRecorder); ok {
			errs = append(errs, do(b))
		}
	}
	return errors.Join(errs...)
}

func (t *Trace) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	if len(r.Changes) == 0 {
		return nil
	}
	rev, err := t.cfg.Git.Head()
	if err != nil {
		rev = ""
	}
	// A command's changes carry the command line that caused them.
	command, _, _ := c.String("command")
	// Every change gets its record: one that cannot be written must not
	// keep the ones after it out of the ledger.
	var errs []error
	for i := range r.Changes {
		ch := &r.Changes[i]
		ranges, deleted := orchestration.ComputeRanges(ch.Before, ch.After)
		m := orchestration.Meta{
			Intent: c.Intent, Session: c.Session, CallID: c.ID, Tool: c.Tool,
			Command: command, DeletedLines: deleted,
		}
		if ch.Existed && !ch.BeforeUnknown {
			m.BeforeSHA256 = ch.BeforeHash()
		}
		// A name that is not UTF-8 (a command can create one) cannot be
		// a ledger path as is; record it readably rather than not at all.
		// The denial slot keeps the exact bytes, quoted.
		path := strings.ToValidUTF8(ch.Path, "\uFFFD")
		switch {
		case ch.Violation:
			m.Decision = orchestration.DecisionViolation
			m.Mutation = orchestration.MutationViolation
		case ch.Deleted:
			m.Mutation = orchestration.MutationDelete
		case ch.Existed:
			m.Mutation = orchestration.MutationModify
		default:
			m.Mutation = orchestration.MutationCreate
		}
		if !ch.Deleted {
			m.AfterSHA256 = ch.AfterHash()
		} else {
			ranges = nil
		}
		if ch.Violation || ch.Reason != "" {
			m.Denial = reasonJSON(c, *ch)
		}
		if strings.HasPrefix(ch.Reason, RecoveredReason) {
			m.Recovered = ch.Reason
		}
		if !ch.Violation && strings.HasPrefix(ch.Reason, AmbiguousReason) {
			m.Ambiguous = strings.TrimPrefix(ch.Reason, AmbiguousReason)
		}
		rec, err := orchestration.NewRecord(orchestration.RecordInput{
			Revision: rev, ToolVersion: t.cfg.Version, Model: c.Agent.Model, AgentName: c.Agent.Name,
			Path: path, Ranges: ranges, Meta: m,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("trace %q: %w", ch.Path, err))
			continue
		}
		var after []byte
		if !ch.Deleted && !ch.Violation {
			after = ch.After
		}
		// The directory fsyncs of the call's renames run alongside the
		// ledger's: started before the record is appended, waited for
		// once it is durable. The journal entry goes only once both are
		// done.
		waitDirs := c.StartPendingSync()
		err = t.append(rec, after)
		syncErr := waitDirs()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if syncErr != nil {
			errs = append(errs, syncErr)
			continue
		}
		engine.CrashPoint("crash-after-record")
		t.journalDone(c, ch.Path)
	}
	return errors.Join(errs...)
}

// reasonJSON explains, in the denial slot, why a change is a violation.
func reasonJSON(c *engine.Call, ch engine.FileChange) []byte {
	code := engine.ScopeViolation
	if !ch.Violation {
		return nil
	}
	name := ch.Path
	if !utf8.ValidString(name) {
		name = strconv.Quote(name)
	}
	d := &engine.Denial{Code: code, Tool: c.Tool, Path: strings.ToValidUTF8(ch.Path, "\uFFFD"), Intent: c.Intent,
		Message: name + " was changed by a command: " + ch.Reason}
	return d.JSON()
}

// Denied records a refusal.
func (t *Trace) Denied(ctx context.Context, c *engine.Call, d *engine.Denial) error {
	rev, _ := t.cfg.Git.Head()
	command, _, _ := c.String("command")
	path := d.Path
	if path == "" {
		path, _, _ = c.Target()
	}
	rec, err := orchestration.NewRecord(orchestration.RecordInput{
		Revision: rev, ToolVersion: t.cfg.Version, Model: c.Agent.Model, AgentName: c.Agent.Name,
		Path: path,
		Meta: orchestration.Meta{Intent: c.Intent, Session: c.Session, CallID: c.ID, Tool: c.Tool,
			Command: command, Decision: orchestration.DecisionDeny, Denial: d.JSON()},
	})
	if err != nil {
		return err
	}
	return t.append(rec, nil)
}

// append retries briefly: a full disk or a lock held by a crashed process may
// clear, and a record must not be dropped silently. The last error is
// returned so the front door reports it. Recorders run once the record is in.
func (t *Trace) append(rec *orchestration.Record, after []byte) error {
	// A command may have swapped the directory for a link since the call
	// began; appending through it would write outside the workspace.
	if err := orchestration.CheckIntact(filepath.Dir(t.cfg.Ledger.Path()), orchestration.LedgerName, orchestration.LedgerName+".lock"); err != nil {
		return fmt.Errorf("append to the ledger: %w", err)
	}
	var line []byte
	var err error
	for i, wait := 0, 10*time.Millisecond; i < 3; i, wait = i+1, wait*4 {
		if line, err = t.cfg.Ledger.AppendLine(rec); err == nil {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		return fmt.Errorf("append to the ledger: %w", err)
	}
	var errs []error
	for _, r := range t.cfg.Then {
		var err error
		if cr, ok := r.(ContentRecorder); ok && after != nil {
			err = cr.RecordedContent(rec, line, after)
		} else {
			err = r.Recorded(rec, line)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
