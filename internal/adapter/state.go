package adapter

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

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/internal/gatecore"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/tools/picture"
)

// What a pre-tool event leaves in the session for its post event, which runs
// in another process: the file as it was before an edit (so the trace records
// the lines the edit changed), and a picture of the workspace before a
// command (so the post event can tell what the command changed).
//
// A picture (gate.Runtime.Picture) is a file of its own under
// .orchestration/sessions/snapshots/, so the session file every event reads
// stays small.
const (
	preImageMax = 1 << 20 // the largest file kept whole for its post event

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
	Taken  time.Time `json:"taken"`
	File   string    `json:"file"`   // in the snapshots directory
	SHA256 string    `json:"sha256"` // of the file's bytes
}

// fileKey is where an edit's pre-image waits for its post event; other
// sessions' commands read it to know the edit is under way.
func fileKey(rel string) string { return gatecore.PendingEditKey(rel) }

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
	_, err = h.sessions().Update(h.ev.Session, func(s *orchestration.Session) error {
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
	_, err = h.sessions().Update(h.ev.Session, func(s *orchestration.Session) error {
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
	return filepath.Join(h.orch(), orchestration.SessionsDir, "snapshots")
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
	b, err := h.rt.Workspace().ReadFile(rel)
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
	st, err := h.rt.Picture()
	if err != nil {
		return err
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// The sessions directory is written through: it must still be the one
	// intentgate made, not a link a command put there.
	if err := orchestration.CheckIntact(h.orch(), orchestration.SessionsDir); err != nil {
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
	// The picture lives where a command may write: its digest goes into
	// the (authenticated) session and, outside the workspace, beside the
	// workspace key, so that removing or forging either is noticed.
	digest := engine.Hash(data)
	if err := orchestration.NotePending(h.rt.Root(), h.ev.Session, h.cmdKey(), digest); err != nil {
		return err
	}
	return h.putState(h.cmdKey(), snapRef{Taken: time.Now().UTC(), File: name, SHA256: digest})
}

// refuseSession stops the session: a picture its decision depended on was
// removed or altered. The model is told; every later call of the session
// is refused until a person removes the session file.
func (h *hookRun) refuseSession(why string) string {
	if ss := h.sessions(); ss == nil {
		h.warnf("cannot mark session %s refused: .orchestration/ is not intact", h.ev.Session)
	} else if err := ss.Refuse(h.ev.Session, why); err != nil {
		h.warnf("cannot mark session %s refused: %v", h.ev.Session, err)
	}
	return "SESSION_REFUSED: " + why + ". What the command changed cannot be judged, so intentgate refuses every further call of this session; a person must review the workspace and remove the session's file under .orchestration/sessions/ to go on."
}

// observeRead records a whole-file read as the hash lock's baseline: the
// file's hash, provided the agent was shown what the file holds now (line
// endings aside). When the payload does not carry what was shown, the file
// as it is now stands for it.
func (h *hookRun) observeRead(ctx context.Context, c *engine.Call, op Op) {
	rel, ok, err := c.Target()
	if err != nil || !ok || op.Partial {
		return
	}
	cur, err := h.rt.Workspace().ReadFile(rel)
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
func (h *hookRun) observeFile(ctx context.Context, c *engine.Call, op Op) {
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
	after, err := h.rt.Workspace().ReadFile(rel)
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
func reverseEdits(after []byte, edits []Replacement) ([]byte, bool) {
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

// observeCommand has the runtime judge what the command changed since its
// picture from the pre event, and returns what the model must be told.
func (h *hookRun) observeCommand(ctx context.Context, c *engine.Call) string {
	var ref snapRef
	ok, err := h.takeState(h.cmdKey(), &ref)
	noted, nerr := orchestration.TakePending(h.rt.Root(), h.ev.Session, h.cmdKey())
	switch {
	case errors.Is(err, orchestration.ErrSessionRefused):
		return h.refuseSession("the session's state was altered outside intentgate")
	case nerr != nil:
		h.warnf("cannot check the picture of the workspace from before the command: %v", nerr)
	case (err != nil || !ok) && noted != "":
		return h.refuseSession("the picture of the workspace taken before this command was removed from the session")
	}
	if err != nil || !ok || ref.File == "" || filepath.Base(ref.File) != ref.File {
		h.warnf("no picture of the workspace from before the command (was its pre-tool event seen?): what it changed cannot be judged")
		return ""
	}
	path := filepath.Join(h.snapshotDir(), ref.File)
	data, err := os.ReadFile(path)
	os.Remove(path)
	switch {
	case err != nil:
		return h.refuseSession("the picture of the workspace taken before this command is gone (" + err.Error() + ")")
	case ref.SHA256 == "" || engine.Hash(data) != ref.SHA256 || (noted != "" && noted != ref.SHA256):
		return h.refuseSession("the picture of the workspace taken before this command was altered")
	}
	var st picture.StoredSnapshot
	if err := json.Unmarshal(data, &st); err != nil {
		return h.refuseSession("the picture of the workspace taken before this command cannot be read: " + err.Error())
	}
	res, err := h.rt.ObserveCommand(ctx, c, &st, h.ev.Output)
	if err != nil {
		h.warnf("%v", err)
	}
	if res == nil {
		return ""
	}
	if note, _ := res.Data[gatecore.NoteKey].(string); note != "" {
		h.note = strings.TrimSpace(h.note + "\n" + note)
	}
	return res.Output
}
