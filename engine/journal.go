package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// JournalDir holds, relative to the workspace, one entry per change that is
// about to happen and is not recorded yet: Edit writes the entry (and syncs
// it) before the rename that makes the change, and the trace removes it once
// the change's record is in the ledger. An entry found later means a crash
// came between the change and its record; the next open completes the record
// (hooks.Trace) and verify reports it as a change without a record until
// then.
const JournalDir = ".orchestration/journal"

// JournalEntry is one change in flight.
type JournalEntry struct {
	Path    string    `json:"path"`
	Existed bool      `json:"existed"`
	Before  string    `json:"before_sha256,omitempty"`
	After   string    `json:"after_sha256"`
	Session string    `json:"session,omitempty"`
	Intent  string    `json:"intent,omitempty"`
	CallID  string    `json:"call_id,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Agent   Agent     `json:"agent"`
	Time    time.Time `json:"time"`
	Pid     int       `json:"pid"` // the process making the change
}

// Abandoned reports whether the process that wrote the entry is gone, so
// that the change can no longer be recorded by it.
func (e JournalEntry) Abandoned() bool { return processGone(e.Pid, e.Time) }

// JournalName is the entry's file name for a call's change of rel.
func JournalName(callID, session, rel string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + callID + "\x00" + rel))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// journalWrite writes the entry for the change ch is about to make, not
// synced yet: Edit syncs it together with the new content, before the
// rename. It returns the journal directory (to release), the open entry
// and its name.
func (w *Workspace) journalWrite(c *Call, ch *FileChange) (*dirRef, *os.File, string, error) {
	e := JournalEntry{Path: ch.Path, Existed: ch.Existed, After: ch.AfterHash(),
		Session: c.Session, Intent: c.Intent, CallID: c.ID, Tool: c.Tool, Agent: c.Agent, Time: time.Now().UTC(), Pid: os.Getpid()}
	if ch.Existed {
		e.Before = ch.BeforeHash()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, nil, "", err
	}
	dir, err := w.acquireDir(JournalDir, true)
	if err != nil {
		return nil, nil, "", fmt.Errorf("journal: %w", err)
	}
	name := JournalName(c.ID, c.Session, ch.Path)
	f, err := createIn(dir, name, 0o644, false)
	if err == nil {
		if _, err = f.Write(b); err != nil {
			f.Close()
			dir.root.Remove(name)
		}
	}
	if err != nil {
		w.releaseDir(dir)
		return nil, nil, "", fmt.Errorf("journal: %w", err)
	}
	return dir, f, name, nil
}

// JournalDone removes the entry of a call's change of rel: its record is in
// the ledger. Losing the removal in a crash is harmless: the next open finds
// the record and drops the entry.
func (w *Workspace) JournalDone(callID, session, rel string) {
	w.journalRemove(JournalName(callID, session, rel))
}

func (w *Workspace) journalRemove(name string) {
	dir, err := w.acquireDir(JournalDir, false)
	if err != nil {
		return
	}
	defer w.releaseDir(dir)
	dir.root.Remove(name)
}

// Journal lists the entries left in the journal, with their file names.
func (w *Workspace) Journal() (map[string]JournalEntry, error) {
	return ReadJournal(w.Abs(JournalDir))
}

// JournalRemove drops the entry name (from Journal).
func (w *Workspace) JournalRemove(name string) { w.journalRemove(name) }

// ReadJournal reads the journal directory dir (workspace/JournalDir).
func ReadJournal(dir string) (map[string]JournalEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]JournalEntry{}
	for _, de := range entries {
		if !de.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(dir + string(os.PathSeparator) + de.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue // recorded and removed by its writer since the listing
		}
		if err != nil {
			return nil, err
		}
		var e JournalEntry
		if json.Unmarshal(b, &e) != nil || e.Path == "" {
			continue // torn by a crash before its sync: the change never began
		}
		out[de.Name()] = e
	}
	return out, nil
}
