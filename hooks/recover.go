package hooks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/orchestration"
)

// AmbiguousReason begins the Reason of a command's change that another
// session also made while the command ran: it is recorded as ambiguous and
// not judged as the command's (internal/gate finds these).
const AmbiguousReason = "ambiguous: "

// LostChangeReason ends the reason of a record written after a crash that
// kept a change's record but lost the change itself (its rename): the file
// is recorded as it is, back to what it was before.
const LostChangeReason = "the change was recorded but lost in the crash, and the file is recorded as it is now"

// RecoveredReason starts the reason of a record written for a change whose
// own record a crash prevented.
const RecoveredReason = "recorded after a crash: the change was made but its record was not written"

// journalDir is the workspace's engine.JournalDir, found from the ledger.
func (t *Trace) journalDir() string {
	return filepath.Join(filepath.Dir(t.cfg.Ledger.Path()), filepath.Base(engine.JournalDir))
}

// journalDone marks done the journal entry of a change now recorded.
func (t *Trace) journalDone(c *engine.Call, path string) { c.JournalDone(path) }

// Recover completes what a crash between a change and its record left in the
// journal (engine.JournalDir): an entry of a process that is gone whose
// change happened gets its record now, flagged with RecoveredReason; one
// whose change never happened (the file still as it was) is dropped, as is
// one already recorded. It runs when the trace policy is made, that is on
// every open of the workspace.
func (t *Trace) Recover(ctx context.Context) error {
	dir := t.journalDir()
	entries, err := engine.ReadJournal(dir)
	if err != nil || len(entries) == 0 {
		return err
	}
	lock, err := fsx.Acquire(filepath.Join(dir, ".recover.lock"))
	if err != nil {
		return err
	}
	defer lock.Release()
	if entries, err = engine.ReadJournal(dir); err != nil {
		return err
	}
	pending := map[string]string{} // session, call, path -> entry name
	for name, e := range entries {
		if e.Abandoned() {
			pending[e.Session+"\x00"+e.CallID+"\x00"+e.Path] = name
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// A record with the entry's session, call and path means the crash came
	// after the append, before the entry was dropped. The change's
	// directory is synced at the same time as its record (Call.SyncPending),
	// so on a file system that does not commit the two together the
	// record may have survived the crash and the rename not: that is
	// checked below.
	recorded := map[string]bool{}
	err = orchestration.ScanLedger(t.cfg.Ledger.Path(), func(_ int, _ []byte, rec *orchestration.Record, _ error) error {
		if rec == nil || rec.Meta == nil {
			return nil
		}
		for _, f := range rec.Files {
			k := rec.Meta.Session + "\x00" + rec.Meta.CallID + "\x00" + f.Path
			if name, ok := pending[k]; ok {
				recorded[name] = true
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	ws := filepath.Dir(filepath.Dir(dir))
	root, err := os.OpenRoot(ws)
	if err != nil {
		return err
	}
	defer root.Close()
	var errs []error
	for _, name := range pending {
		e := entries[name]
		content, rerr := root.ReadFile(filepath.FromSlash(e.Path))
		exists := rerr == nil
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			errs = append(errs, rerr)
			continue
		}
		cur := ""
		if exists {
			cur = engine.Hash(content)
		}
		unchanged := (e.Existed && exists && cur == e.Before) || (!e.Existed && !exists)
		if recorded[name] {
			if unchanged && cur != e.After {
				// The record is in, the rename was lost: record the file
				// as it is, so the ledger's last word on it is true again.
				c := &engine.Call{ID: e.CallID, Session: e.Session, Intent: e.Intent, Tool: e.Tool, Agent: e.Agent}
				ch := engine.FileChange{Path: e.Path, After: content, Existed: true, Deleted: !exists,
					BeforeUnknown: true, Reason: RecoveredReason + "; " + LostChangeReason}
				if err := t.Post(ctx, c, &engine.Result{Changes: []engine.FileChange{ch}}); err != nil {
					errs = append(errs, err)
				}
			}
			engine.DropJournalEntry(dir, name)
			continue
		}
		if unchanged {
			engine.DropJournalEntry(dir, name) // the rename never happened
			continue
		}
		reason := RecoveredReason
		if cur != e.After {
			reason += "; the file changed again since, and is recorded as it is now"
		}
		c := &engine.Call{ID: e.CallID, Session: e.Session, Intent: e.Intent, Tool: e.Tool, Agent: e.Agent}
		ch := engine.FileChange{Path: e.Path, After: content, Existed: e.Existed, Deleted: !exists,
			BeforeUnknown: e.Existed, Reason: reason}
		if err := t.Post(ctx, c, &engine.Result{Changes: []engine.FileChange{ch}}); err != nil {
			errs = append(errs, err)
			continue
		}
		engine.DropJournalEntry(dir, name)
	}
	return errors.Join(errs...)
}
