package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/internal/journal"
)

// JournalDir holds, relative to the workspace, the changes that are about to
// happen and are not recorded yet: Edit writes an entry (and syncs it)
// before the rename that makes the change, and the trace marks it done once
// the change's record is in the ledger. An entry still pending later means
// a crash came between the change and its record; the next open completes
// the record (hooks.Trace) and verify reports it as a change without a
// record until then.
//
// Each process writes its entries into slots (package internal/journal): a
// file it creates once, or takes over from a process that is gone, holds
// locked while it lives, rewrites in place for each change and marks done
// in place. The lock tells everyone else whether the slot's owner is alive.
// Older builds wrote one file per entry (JournalName, JSON): those are
// still read and recovered.
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

	slot      bool // read from a slot, whose lock says whether its owner lives
	ownerLive bool
}

// Abandoned reports whether the process that wrote the entry is gone, so
// that the change can no longer be recorded by it. For a slot, its owner
// holds its lock while it lives; for an entry file of an older build, its
// process id is asked.
func (e JournalEntry) Abandoned() bool {
	if e.slot {
		return !e.ownerLive
	}
	return processGone(e.Pid, e.Time)
}

// JournalName is the file name an older build gave the entry of a call's
// change of rel.
func JournalName(callID, session, rel string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + callID + "\x00" + rel))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// slot is a journal slot this process owns: open, locked, and either free
// (its last entry done) or holding the entry of one change in flight.
type slot struct {
	f    *os.File
	name string
	id   fs.FileInfo // what the name was when the slot was taken
	buf  []byte
}

// slots are the workspace's journal slots.
type slots struct {
	mu      sync.Mutex
	free    []*slot
	all     []*slot
	adopted bool // the slots other processes left have been looked at
}

// callSlot is the slot holding the entry of a call's change of rel.
type callSlot struct {
	w   *Workspace
	rel string
	s   *slot
}

// journalWrite writes the entry for the change ch is about to make into a
// slot, not synced yet: Edit syncs it together with the new content, before
// the rename. It returns the slot; the call keeps it until the change's
// record is in (Call.JournalDone), or Edit gives it back (journalAbort).
func (w *Workspace) journalWrite(c *Call, ch *FileChange) (*slot, error) {
	e := JournalEntry{Path: ch.Path, Existed: ch.Existed, After: ch.AfterHash(),
		Session: c.Session, Intent: c.Intent, CallID: c.ID, Tool: c.Tool, Agent: c.Agent, Time: time.Now().UTC(), Pid: selfPid}
	if ch.Existed {
		e.Before = ch.BeforeHash()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if len(b) > journal.MaxEntry {
		return nil, fmt.Errorf("journal: the entry of %s is %d bytes, more than %d", ch.Path, len(b), journal.MaxEntry)
	}
	dir, err := w.acquireDir(JournalDir, true)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer w.releaseDir(dir)
	// A second change of the same file by the same call goes over the
	// first one's entry, as an older build's entry file of the same name
	// was replaced.
	s := c.takeSlot(w, ch.Path)
	if s != nil && !slotAt(dir, s.name, s.id) {
		w.dropSlot(s)
		s = nil
	}
	if s == nil {
		if s, err = w.getSlot(dir); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
	}
	s.buf = journal.AppendSlot(s.buf[:0], b)
	if _, err := s.f.WriteAt(s.buf, 0); err != nil {
		// What the slot holds is unknown now: it is not used again.
		w.dropSlot(s)
		return nil, fmt.Errorf("journal: %w", err)
	}
	c.journal = append(c.journal, callSlot{w, ch.Path, s})
	return s, nil
}

// journalAbort marks done the entry of a change Edit gave up before or at
// its rename, and frees the slot.
func (w *Workspace) journalAbort(c *Call, rel string) {
	if s := c.takeSlot(w, rel); s != nil {
		w.slotDone(s)
	}
}

// takeSlot removes and returns the slot of the call's change of rel in w.
func (c *Call) takeSlot(w *Workspace, rel string) *slot {
	for i, cs := range c.journal {
		if cs.w == w && cs.rel == rel {
			c.journal = append(c.journal[:i], c.journal[i+1:]...)
			return cs.s
		}
	}
	return nil
}

// JournalDone marks done the journal entry of the call's change of rel: its
// record is in the ledger (and the change's directory durable). The mark is
// not synced: a crash that loses it leaves a pending entry whose record the
// next open finds, and drops.
func (c *Call) JournalDone(rel string) {
	for i, cs := range c.journal {
		if cs.rel == rel {
			c.journal = append(c.journal[:i], c.journal[i+1:]...)
			cs.w.slotDone(cs.s)
			return
		}
	}
}

// slotDone writes the done mark into s and frees it for the next change.
func (w *Workspace) slotDone(s *slot) {
	if _, err := s.f.WriteAt([]byte{journal.Done}, journal.StateOffset); err != nil {
		w.dropSlot(s)
		return
	}
	w.slots.mu.Lock()
	w.slots.free = append(w.slots.free, s)
	w.slots.mu.Unlock()
}

// dropSlot stops using s: it is closed, and with it goes its lock, so that
// its entry (if pending) is the next open's to recover.
func (w *Workspace) dropSlot(s *slot) {
	w.slots.mu.Lock()
	w.slots.all = slices.DeleteFunc(w.slots.all, func(o *slot) bool { return o == s })
	w.slots.free = slices.DeleteFunc(w.slots.free, func(o *slot) bool { return o == s })
	w.slots.mu.Unlock()
	s.f.Close()
}

// getSlot returns a free slot in dir, the journal directory: one of this
// workspace's own, one a process that is gone left with nothing pending,
// or a new one.
func (w *Workspace) getSlot(dir *dirRef) (*slot, error) {
	sl := &w.slots
	adopt := false
	for {
		sl.mu.Lock()
		n := len(sl.free)
		if n == 0 {
			adopt = !sl.adopted
			sl.adopted = true
			sl.mu.Unlock()
			break
		}
		s := sl.free[n-1]
		sl.free = sl.free[:n-1]
		sl.mu.Unlock()
		if slotAt(dir, s.name, s.id) {
			return s, nil
		}
		// Removed or replaced since: a slot recovery can find is needed.
		w.dropSlot(s)
	}
	var s *slot
	if adopt {
		s = adoptSlot(dir)
	}
	if s == nil {
		var err error
		if s, err = newSlot(dir); err != nil {
			return nil, err
		}
	}
	sl.mu.Lock()
	sl.all = append(sl.all, s)
	sl.mu.Unlock()
	return s, nil
}

// maxSlotBytes bounds what is read of a slot.
const maxSlotBytes = 2 * journal.MaxEntry

// adoptSlot takes over a slot that a process which is gone left in dir
// with nothing pending (done, empty, or torn: a torn slot's change never
// began), so that a process that writes does not create a file. A slot
// whose entry is pending is left to recovery.
func adoptSlot(dir *dirRef) *slot {
	d, err := dir.root.Open(".")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if !strings.HasSuffix(name, journal.SlotSuffix) {
			continue
		}
		if s := takeOver(dir, name); s != nil {
			return s
		}
	}
	return nil
}

func takeOver(dir *dirRef, name string) *slot {
	f, err := openSlotAt(dir, name, false)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || openedLinks(f, fi) != 1 {
		f.Close()
		return nil
	}
	// Locked: its owner lives. Unlocked, the lock is now ours; the name
	// must still be the file (recovery may have removed it in between).
	if ok, _ := tryLock(f, true); !ok || !slotAt(dir, name, fi) {
		f.Close()
		return nil
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxSlotBytes))
	if _, st := journal.ParseSlot(b); err != nil || st == journal.InFlight {
		f.Close()
		return nil
	}
	return &slot{f: f, name: name, id: fi}
}

// newSlot creates a slot in dir, locked, its name durable.
func newSlot(dir *dirRef) (*slot, error) {
	for attempt := 0; ; attempt++ {
		var rnd [8]byte
		if _, err := readRandom(rnd[:]); err != nil {
			return nil, err
		}
		name := hex.EncodeToString(rnd[:]) + journal.SlotSuffix
		f, err := openSlotAt(dir, name, true)
		if errors.Is(err, fs.ErrExist) && attempt < 4 {
			continue
		}
		if err != nil {
			return nil, err
		}
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			removeSlotAt(dir, name)
			return nil, err
		}
		fi, serr := f.Stat()
		// Until it was locked, it was an empty slot nobody owned: another
		// process may have taken it over (and holds it now).
		if !ok || serr != nil || !slotAt(dir, name, fi) {
			f.Close()
			if attempt < 4 {
				continue
			}
			return nil, fmt.Errorf("slot %s taken by another process", name)
		}
		// Recovery must find the slot after a crash: its name is made
		// durable once, before any entry relies on it.
		if err := syncDirFile(dir.f); err != nil {
			removeSlotAt(dir, name)
			f.Close()
			return nil, err
		}
		return &slot{f: f, name: name, id: fi}, nil
	}
}

// closeSlots closes the workspace's slots (Workspace.Close). A slot whose
// entry is done is removed; one still pending stays, unlocked, for the next
// open to recover.
func (w *Workspace) closeSlots() {
	sl := &w.slots
	sl.mu.Lock()
	all, free := sl.all, sl.free
	sl.all, sl.free = nil, nil
	sl.mu.Unlock()
	if len(all) == 0 {
		return
	}
	var dir *dirRef
	if slotsRemovedAtClose {
		if d, err := w.acquireDir(JournalDir, false); err == nil {
			dir = d
			defer w.releaseDir(d)
		}
	}
	for _, s := range all {
		// Removed while it is still locked, so that nobody takes over
		// a file that is going away.
		if dir != nil && slices.Contains(free, s) && slotAt(dir, s.name, s.id) {
			removeSlotAt(dir, s.name)
		}
		s.f.Close()
	}
}

// Journal lists the pending entries of the journal, by file name.
func (w *Workspace) Journal() (map[string]JournalEntry, error) {
	return ReadJournal(w.Abs(JournalDir))
}

// JournalRemove drops the entry name (from Journal): DropJournalEntry.
func (w *Workspace) JournalRemove(name string) { DropJournalEntry(w.Abs(JournalDir), name) }

// ReadJournal reads the journal directory dir (workspace/JournalDir): the
// pending entries, by file name, in slots and in entry files of older
// builds. A slot that is done, empty or torn has none; neither has an entry
// file that does not parse (torn by a crash before its sync: its change
// never began).
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
		p := filepath.Join(dir, de.Name())
		if strings.HasSuffix(de.Name(), journal.SlotSuffix) {
			e, ok, err := readSlotEntry(p)
			if err != nil {
				return nil, err
			}
			if ok {
				out[de.Name()] = e
			}
			continue
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // recorded and removed by its writer since the listing
		}
		if err != nil {
			return nil, err
		}
		var e JournalEntry
		if json.Unmarshal(b, &e) != nil || e.Path == "" {
			continue
		}
		out[de.Name()] = e
	}
	return out, nil
}

// readSlotEntry reads the slot at p: its entry, if pending, and whether its
// owner lives (holds its lock). The lock is asked first and held while the
// slot is read, so that no process takes it over meanwhile.
func readSlotEntry(p string) (JournalEntry, bool, error) {
	var e JournalEntry
	f, err := os.OpenFile(p, os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return e, false, nil // its owner removed it since the listing
	}
	if err != nil {
		return e, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return e, false, err
	}
	// An error asking (a file system without locks) counts as alive: the
	// entry is then never recovered behind its owner's back.
	locked, _ := tryLock(f, false)
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxSlotBytes))
	if locked {
		unlockSlot(f)
	}
	if err != nil {
		return e, false, err
	}
	entry, st := journal.ParseSlot(b)
	if st != journal.InFlight || json.Unmarshal(entry, &e) != nil || e.Path == "" {
		return JournalEntry{}, false, nil
	}
	e.slot, e.ownerLive = true, !locked
	return e, true, nil
}

// DropJournalEntry drops the entry name of the journal directory dir, once
// recovery dealt with it: an entry file is removed; a slot, whose owner is
// gone, is marked done and removed, under its lock. A slot whose lock is
// held (someone else took it up meanwhile) is left alone.
func DropJournalEntry(dir, name string) error {
	p := filepath.Join(dir, name)
	if !strings.HasSuffix(name, journal.SlotSuffix) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	f, err := os.OpenFile(p, os.O_RDWR|fsx.NoFollow|fsx.NonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	if ok, err := tryLock(f, true); !ok {
		return err
	}
	if now, err := os.Lstat(p); err != nil || !os.SameFile(fi, now) {
		return nil
	}
	if openedLinks(f, fi) != 1 {
		// The file has another name (a hard link: a backup made with
		// links, or a file linked in): the done mark is not written
		// through it, only the journal's name goes.
		return os.Remove(p)
	}
	if _, err := f.WriteAt([]byte{journal.Done}, journal.StateOffset); err != nil {
		return err
	}
	if slotsRemovedAtClose {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
