package gatecore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/tools/picture"
)

// A command is judged by comparing the workspace before and after it, but
// other sessions keep working while it runs: a file another session edited
// through its own tools during the command must not be credited to the
// command, its model must not be told to undo it, and on_violation must not
// revert it. The ledger says which files other sessions changed and from
// which content to which; the in-flight journal and the other sessions'
// pending pre-tool events say which changes are under way and not recorded
// yet. A change the other sessions' steps explain entirely is theirs and
// leaves the command's result; one they explain only in part (both touched
// the file) is recorded as ambiguous, never guessed.

// PendingEditKey is the session state key under which an external agent's
// pre-tool event keeps a file it is about to change, until its post event
// (internal/adapter writes it). Other sessions' pending keys make a
// command's change of the same file ambiguous.
func PendingEditKey(rel string) string { return "hook:file:" + rel }

// pendingTaken is the part of a pending edit's state the runtime reads.
type pendingTaken struct {
	Taken time.Time `json:"taken"`
}

// pendingWindow bounds how long before a command's picture another
// session's pre-tool event may have come for its edit to still be under way
// when the command ran; older pending state belongs to a tool that failed.
const pendingWindow = 10 * time.Minute

// Picture is the workspace before a command, placed in time (the clock and
// the ledger's length) so that what other sessions record while the command
// runs can be told apart from what the command does.
func (rt *Runtime) Picture() (*picture.StoredSnapshot, error) {
	at := int64(0)
	if rt.stores != nil {
		if fi, err := os.Stat(rt.stores.Ledger.Path()); err == nil {
			at = fi.Size()
		}
	}
	taken := time.Now().UTC()
	st, err := picture.Picture(rt.ws.Dir)
	if err != nil {
		return nil, err
	}
	st.Taken, st.LedgerAt = taken, at
	return st, nil
}

// otherStep is one change of a file by another session: recorded, or under
// way (From "" and To "" unknown for a pending pre-tool event).
type otherStep struct {
	session string
	from    string // hex SHA-256 before; "" for a file that did not exist
	to      string // after; "" when deleted
	known   bool   // from and to are known (a record of a tool's change)
	what    string // for the ambiguity note
}

// concurrent drops from r.Changes the changes other sessions made through
// their tools while the command ran, and marks as ambiguous the changes both
// made (hooks.AmbiguousReason). It returns what the model is told about
// them. A picture not placed in time (LedgerAt and Taken unset) is left
// alone. self is the session whose steps are the command's own (c's
// session, or "" when the session's own tools worked while the command
// ran).
func (rt *Runtime) concurrent(c *engine.Call, self string, before *picture.StoredSnapshot, r *engine.Result) (string, error) {
	if rt.stores == nil || before == nil || before.Taken.IsZero() || len(r.Changes) == 0 {
		return "", nil
	}
	paths := map[string]bool{}
	for _, ch := range r.Changes {
		if !ch.Uninspected {
			paths[ch.Path] = true
		}
	}
	steps, err := rt.otherSteps(self, before, paths)
	if len(steps) == 0 {
		return "", err
	}
	var theirs, ambiguous []string
	kept := r.Changes[:0]
	for _, ch := range r.Changes {
		st := steps[ch.Path]
		if len(st) == 0 || ch.Uninspected {
			kept = append(kept, ch)
			continue
		}
		from := ""
		if ch.Existed {
			from = ch.BeforeHash()
			if ch.BeforeUnknown {
				from = "?"
			}
		}
		to := ""
		if !ch.Deleted {
			to = ch.AfterHash()
		}
		if explained(from, to, st) {
			theirs = append(theirs, ch.Path)
			continue
		}
		var who []string
		for _, s := range st {
			who = append(who, s.what)
		}
		ch.Reason = hooks.AmbiguousReason + "also changed during the command by " + strings.Join(who, "; ")
		ambiguous = append(ambiguous, ch.Path)
		kept = append(kept, ch)
	}
	r.Changes = kept
	if r.Data == nil && (len(theirs) > 0 || len(ambiguous) > 0) {
		r.Data = map[string]any{}
	}
	var b strings.Builder
	if len(theirs) > 0 {
		r.Data["changed_by_other_sessions"] = theirs
		fmt.Fprintf(&b, "Changed during the command by other sessions, through their own tools (not by this command; leave them as they are): %s\n", strings.Join(theirs, ", "))
	}
	if len(ambiguous) > 0 {
		r.Data["ambiguous"] = ambiguous
		fmt.Fprintf(&b, "Changed during the command both by it and by another session; intentgate cannot tell the changes apart and recorded them as ambiguous (do not undo them): %s\n", strings.Join(ambiguous, ", "))
	}
	return b.String(), err
}

// explained says whether the other sessions' steps take the file from its
// content in the picture to its content now, with nothing in between: then
// the command did not change it. Steps already in the picture (recorded
// after the ledger was measured but made before the walk) are skipped.
func explained(from, to string, steps []otherStep) bool {
	cur, moved := from, false
	for _, s := range steps {
		switch {
		case !s.known:
			return false
		case s.from == cur && cur != "?":
			cur, moved = s.to, true
		case s.to == cur && !moved:
			// in the picture already
		default:
			return false
		}
	}
	return moved && cur == to
}

// otherSteps returns, per path of paths, the changes other sessions made or
// are making to it since the picture, in ledger order, the recorded ones
// first.
func (rt *Runtime) otherSteps(self string, before *picture.StoredSnapshot, paths map[string]bool) (map[string][]otherStep, error) {
	out := map[string][]otherStep{}
	var errs []error
	if err := scanLedgerFrom(rt.stores.Ledger.Path(), before.LedgerAt, func(rec *orchestration.Record) {
		m := rec.Meta
		if m == nil || m.Session == self || m.Decision == orchestration.DecisionDeny {
			return
		}
		for _, f := range rec.Files {
			if !paths[f.Path] {
				continue
			}
			s := otherStep{session: m.Session, from: m.BeforeSHA256, to: m.AfterSHA256,
				what: fmt.Sprintf("session %s (%s, record %s)", m.Session, m.Tool, rec.ID)}
			// A command's record is itself a picture's guess, and a
			// violation or an ambiguous record proves nothing.
			s.known = m.Command == "" && m.Decision == orchestration.DecisionAllow && m.Ambiguous == "" &&
				(m.BeforeSHA256 != "" || m.Mutation == orchestration.MutationCreate)
			out[f.Path] = append(out[f.Path], s)
		}
	}); err != nil {
		errs = append(errs, fmt.Errorf("cannot read what other sessions recorded during the command: %w", err))
	}
	// Changes under way: intentgate's own edit tools keep a journal entry
	// from before the change until its record is written.
	if entries, err := engine.ReadJournal(rt.ws.Abs(engine.JournalDir)); err != nil {
		errs = append(errs, fmt.Errorf("cannot read the journal of changes under way: %w", err))
	} else {
		names := make([]string, 0, len(entries))
		for n := range entries {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			e := entries[n]
			if e.Session == self || !paths[e.Path] || e.Abandoned() {
				continue
			}
			out[e.Path] = append(out[e.Path], otherStep{session: e.Session, from: e.Before, to: e.After, known: true,
				what: fmt.Sprintf("session %s (%s, under way)", e.Session, e.Tool)})
		}
	}
	// An external agent's edit between its pre-tool and post-tool events.
	sessions, err := rt.stores.Sessions.List()
	if err != nil {
		errs = append(errs, fmt.Errorf("cannot read the other sessions: %w", err))
	}
	for _, s := range sessions {
		if s.ID == self {
			continue
		}
		for p := range paths {
			raw, ok := s.Snapshots[PendingEditKey(p)]
			if !ok {
				continue
			}
			var pt pendingTaken
			if json.Unmarshal(raw, &pt) != nil || pt.Taken.Before(before.Taken.Add(-pendingWindow)) {
				continue
			}
			out[p] = append(out[p], otherStep{session: s.ID,
				what: fmt.Sprintf("session %s (an edit whose result is not reported yet)", s.ID)})
		}
	}
	return out, errors.Join(errs...)
}

// scanLedgerFrom calls fn for every record of the ledger at path that begins
// at or after offset (the first whole line there). A ledger shorter than
// offset was replaced: it is read from its start (the steps already in the
// picture are skipped by explained).
func scanLedgerFrom(path string, offset int64, fn func(*orchestration.Record)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if offset > fi.Size() || offset < 0 {
		offset = 0
	}
	skipPartial := false
	if offset > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], offset-1); err != nil {
			return err
		}
		skipPartial = b[0] != '\n'
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if skipPartial {
				skipPartial = false
			} else if rec, perr := orchestration.ReadLedgerLine(bytes.TrimSuffix(line, []byte{'\n'})); perr == nil {
				fn(rec)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
