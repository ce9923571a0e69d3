package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intentgate/intentgate/cmd/intentgate/internal/agents"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/engine/fsx"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/tools"
)

// What a pre-tool event leaves in the session for its post event, which runs
// in another process: the file as it was before an edit (so the trace records
// the lines the edit changed), and a picture of the workspace before a
// command (so the post event can tell what the command changed).
//
// A picture holds stat data and hashes for every file, plus the content of
// small files within a budget; a changed file whose old content was not kept
// is recorded whole. With on_violation: revert, the budget is larger, since
// restoring a file needs its old content. Pictures are files of their own
// under .orchestration/sessions/snapshots/, so the session file every event
// reads stays small.
const (
	preImageMax = 1 << 20 // the largest file kept whole for its post event

	snapKeepFile        = 64 << 10
	snapKeepTotal       = 2 << 20
	snapRevertKeepFile  = 1 << 20
	snapRevertKeepTotal = 32 << 20

	// stateTTL drops what a post event never came for (the tool failed, the
	// agent was stopped).
	stateTTL = 6 * time.Hour

	statePrefix = "hook:"
)

type preImage struct {
	Taken   time.Time `json:"taken"`
	Existed bool      `json:"existed"`
	Known   bool      `json:"known"` // Content is the file's content
	Content []byte    `json:"content,omitempty"`
}

type snapRef struct {
	Taken time.Time `json:"taken"`
	File  string    `json:"file"` // in the snapshots directory
}

func fileKey(rel string) string { return statePrefix + "file:" + rel }

func (h *hookRun) cmdKey() string { return statePrefix + "cmd:" + h.ev.CallKey() }

var errNoState = errors.New("no state")

// putState stores v under key in the session, dropping expired state.
func (h *hookRun) putState(key string, v any) error {
	if h.ev.Session == "" {
		return errors.New("the event has no session id")
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var stale []string
	_, err = h.g.sessions.Update(h.ev.Session, func(s *orchestration.Session) error {
		stale = expireState(s, time.Now())
		s.Snapshots[key] = raw
		return nil
	})
	for _, name := range stale {
		h.removeSnapshotFile(name)
	}
	return err
}

// takeState loads and removes the state under key; ok is false if there is none.
func (h *hookRun) takeState(key string, v any) (ok bool, err error) {
	if h.ev.Session == "" {
		return false, nil
	}
	var raw json.RawMessage
	_, err = h.g.sessions.Update(h.ev.Session, func(s *orchestration.Session) error {
		raw = s.Snapshots[key]
		if raw == nil {
			return errNoState // nothing to write back
		}
		delete(s.Snapshots, key)
		return nil
	})
	if errors.Is(err, errNoState) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(raw, v)
}

// expireState drops the hook state older than stateTTL and returns the
// snapshot files of what it dropped.
func expireState(s *orchestration.Session, now time.Time) []string {
	var files []string
	for k, raw := range s.Snapshots {
		if !strings.HasPrefix(k, statePrefix) {
			continue
		}
		var t struct {
			Taken time.Time `json:"taken"`
			File  string    `json:"file"`
		}
		if json.Unmarshal(raw, &t) == nil && now.Sub(t.Taken) < stateTTL {
			continue
		}
		delete(s.Snapshots, k)
		if t.File != "" {
			files = append(files, t.File)
		}
	}
	return files
}

func (h *hookRun) snapshotDir() string {
	return filepath.Join(h.g.orch, "sessions", "snapshots")
}

func (h *hookRun) removeSnapshotFile(name string) {
	if name == "" || filepath.Base(name) != name {
		return
	}
	os.Remove(filepath.Join(h.snapshotDir(), name))
}

// savePreImage keeps the file as it is before an edit, for the post event.
func (h *hookRun) savePreImage(rel string) {
	if h.ev.Session == "" {
		return
	}
	pi := preImage{Taken: time.Now().UTC()}
	b, err := h.g.ws.ReadFile(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil, len(b) > preImageMax:
		pi.Existed = true
	default:
		pi.Existed, pi.Known, pi.Content = true, true, b
	}
	if err := h.putState(fileKey(rel), pi); err != nil {
		h.warnf("cannot keep %s for the post event: %v", rel, err)
	}
}

// saveSnapshot pictures the workspace before a command.
func (h *hookRun) saveSnapshot() error {
	if h.ev.Session == "" {
		return errors.New("the event has no session id")
	}
	keepFile, budget := int64(snapKeepFile), int64(snapKeepTotal)
	if h.config().revert {
		keepFile, budget = snapRevertKeepFile, snapRevertKeepTotal
	}
	snap, err := tools.TakeSnapshot(h.g.ws.Dir)
	if err != nil {
		return err
	}
	st := snap.Store(func(rel string, size int64) bool {
		if size > keepFile || size > budget {
			return false
		}
		budget -= size
		return true
	})
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// The sessions directory is written through: it must still be the one
	// intentgate made, not a link a command put there.
	if err := orchestration.CheckIntact(h.g.orch, "sessions"); err != nil {
		return err
	}
	dir := h.snapshotDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	sum := sha256.Sum256([]byte(h.ev.Session + "\x00" + h.cmdKey()))
	name := hex.EncodeToString(sum[:16]) + ".json"
	if err := fsx.Replace(filepath.Join(dir, name), data, 0o644, fsx.Settled); err != nil {
		return err
	}
	return h.putState(h.cmdKey(), snapRef{Taken: time.Now().UTC(), File: name})
}

// observeRead records a whole-file read as the hash lock's baseline: the
// file's hash, provided the agent was shown what the file holds now (line
// endings aside). When the payload does not carry what was shown, the file
// as it is now stands for it.
func (h *hookRun) observeRead(ctx context.Context, c *engine.Call, op agents.Op) {
	rel, ok, err := c.Target()
	if err != nil || !ok || op.Partial {
		return
	}
	cur, err := h.g.ws.ReadFile(rel)
	if err != nil {
		return
	}
	if op.HasShown && !sameText(op.Shown, cur) && !(op.ShownTrimmed && sameText(append(op.Shown, '\n'), cur)) {
		// The file changed since the agent was shown it: no baseline, so an
		// edit is refused until the agent reads it again.
		return
	}
	h.observe(ctx, c, &engine.Result{Reads: []engine.FileRead{{Path: rel, SHA256: engine.Hash(cur), Whole: true}}})
}

func sameText(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	crlf, lf := []byte("\r\n"), []byte("\n")
	return bytes.Equal(bytes.ReplaceAll(a, crlf, lf), bytes.ReplaceAll(b, crlf, lf))
}

// observeFile records what a write, edit or delete did: the content before
// (from the payload, else from the pre event) and the file as it is now.
func (h *hookRun) observeFile(ctx context.Context, c *engine.Call, op agents.Op) {
	rel, ok, err := c.Target()
	if err != nil || !ok {
		h.warnf("cannot record the change to %s: %v", op.Path, err)
		return
	}
	var pi preImage
	hadPre, err := h.takeState(fileKey(rel), &pi)
	if err != nil {
		h.warnf("cannot load what %s held before: %v", rel, err)
	}
	after, err := h.g.ws.ReadFile(rel)
	deleted := errors.Is(err, fs.ErrNotExist)
	if err != nil && !deleted {
		h.warnf("cannot read %s to record the change: %v", rel, err)
		return
	}
	ch := engine.FileChange{Path: rel, After: after, Deleted: deleted}
	if h.violation != "" {
		ch.Violation, ch.Reason = true, h.violation
	}
	known := true
	switch {
	case op.HasBefore:
		ch.Before, ch.Existed = op.Before, op.Existed
	case hadPre && (pi.Known || !pi.Existed):
		ch.Before, ch.Existed = pi.Content, pi.Existed
	case len(op.Edits) > 0:
		ch.Before, known = reverseEdits(after, op.Edits)
		ch.Existed = true
	default:
		known = false
	}
	if !known {
		ch.Before, ch.Existed, ch.BeforeUnknown = nil, true, true
		ch.Reason = "old content unknown: the whole file is recorded"
	}
	switch {
	case ch.Deleted && !ch.Existed:
		return
	case ch.Deleted:
		ch.After = nil
	case known && ch.Existed && bytes.Equal(ch.Before, ch.After):
		return // nothing changed: the tool failed, or wrote the same bytes
	}
	h.observe(ctx, c, &engine.Result{Changes: []engine.FileChange{ch}})
}

// reverseEdits works the old content back from the new one by undoing the
// reported replacements, last first; each new string must occur exactly once.
func reverseEdits(after []byte, edits []agents.Replacement) ([]byte, bool) {
	s := string(after)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if e.New == "" || strings.Count(s, e.New) != 1 {
			return nil, false
		}
		s = strings.Replace(s, e.New, e.Old, 1)
	}
	return []byte(s), true
}

// observeCommand compares the workspace with its picture from before the
// command, records every change (out-of-scope ones as violations), restores
// those with on_violation: revert, and returns what the model must be told.
func (h *hookRun) observeCommand(ctx context.Context, c *engine.Call) string {
	var ref snapRef
	ok, err := h.takeState(h.cmdKey(), &ref)
	if err != nil || !ok || ref.File == "" || filepath.Base(ref.File) != ref.File {
		h.warnf("no picture of the workspace from before the command (was its pre-tool event seen?): what it changed cannot be judged")
		return ""
	}
	path := filepath.Join(h.snapshotDir(), ref.File)
	data, err := os.ReadFile(path)
	os.Remove(path)
	var st tools.StoredSnapshot
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		h.warnf("the picture of the workspace from before the command cannot be read: %v", err)
		return ""
	}
	after, err := tools.TakeSnapshot(h.g.ws.Dir)
	if err != nil {
		h.warnf("the workspace cannot be pictured after the command: %v", err)
		return ""
	}
	changes := commandChanges(&st, st.Load(h.g.ws.Dir).Diff(after), after.Unseen())
	if len(changes) == 0 {
		return ""
	}
	res := &engine.Result{Changes: changes}
	h.observe(ctx, c, res)
	var bad []engine.FileChange
	for _, ch := range res.Changes {
		if ch.Violation {
			bad = append(bad, ch)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	revert := h.config().revert
	var restored map[string]error
	if revert {
		restored = h.revert(&st, bad)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SCOPE_VIOLATION: the command changed %d file(s) it was not allowed to change; intentgate recorded this in the ledger as a violation:\n", len(bad))
	for _, ch := range bad {
		note := ""
		if revert {
			if err := restored[ch.Path]; err != nil {
				note = " (NOT restored: " + err.Error() + ")"
			} else {
				note = " (restored)"
			}
		}
		fmt.Fprintf(&b, "  %s: %s%s\n", ch.Path, ch.Reason, note)
	}
	if revert {
		b.WriteString("intentgate restored these files to their state before the command (on_violation: revert). Do not make these changes again; if they are needed, ask for the intent's scope to be widened.")
	} else {
		b.WriteString("Undo these changes, or ask for the intent's scope to be widened.")
	}
	return b.String()
}

// commandChanges turns a snapshot diff into the changes the post-hooks judge.
// A file whose stat data changed while its content hash did not (touched,
// rewritten with the same bytes) is not a change.
func commandChanges(st *tools.StoredSnapshot, diff []tools.Change, unseen []tools.Unseen) []engine.FileChange {
	var out []engine.FileChange
	for _, ch := range diff {
		if ch.Existed && !ch.Known && !ch.Deleted && ch.Unreadable == "" && ch.Link == "" {
			if f, ok := st.Files[ch.Path]; ok && f.Link == "" && f.SHA256 != "" && f.SHA256 == engine.Hash(ch.After) {
				continue
			}
		}
		fc := engine.FileChange{Path: ch.Path, Before: ch.Before, After: ch.After,
			Existed: ch.Existed, Deleted: ch.Deleted}
		if !ch.Known {
			fc.BeforeUnknown = true
			fc.Reason = "old content unknown (not kept in the snapshot): the whole file is recorded"
		}
		if ch.Link != "" {
			fc.Reason = "now a symbolic link to " + ch.Link
		}
		if ch.Unreadable != "" {
			fc.Uninspected = true
			fc.Reason = "changed, but its new content cannot be read: " + ch.Unreadable
		}
		out = append(out, fc)
	}
	for _, u := range unseen {
		out = append(out, engine.FileChange{Path: u.Path, Uninspected: true,
			Reason: "cannot be inspected after the command: " + u.Why})
	}
	return out
}

// revert restores the files a command changed against the rules to their
// state in the picture, through an os.Root so that no link the command left
// can redirect the restore. It returns, per path, why a file could not be
// restored (nil when it was).
func (h *hookRun) revert(st *tools.StoredSnapshot, bad []engine.FileChange) map[string]error {
	out := map[string]error{}
	root, err := os.OpenRoot(h.g.ws.Dir)
	if err != nil {
		for _, ch := range bad {
			out[ch.Path] = err
		}
		return out
	}
	defer root.Close()
	for _, ch := range bad {
		p := filepath.FromSlash(ch.Path)
		f, had := st.Files[ch.Path]
		var err error
		switch {
		case ch.Uninspected:
			err = errors.New("it cannot be inspected")
		case !ch.Existed:
			err = root.Remove(p)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case had && f.Link != "":
			if err = removeIfThere(root, p); err == nil {
				err = root.Symlink(f.Link, p)
			}
		case had && f.Kept:
			err = restoreFile(root, p, f.Content, f.Mode.Perm())
		default:
			err = errors.New("its old content was not kept")
		}
		out[ch.Path] = err
		if err != nil {
			h.warnf("cannot restore %s: %v", ch.Path, err)
		}
	}
	return out
}

func removeIfThere(root *os.Root, p string) error {
	if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func restoreFile(root *os.Root, p string, content []byte, perm fs.FileMode) error {
	if dir := filepath.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := removeIfThere(root, p); err != nil {
		return err
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
