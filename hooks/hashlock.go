package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// HashLock is the stale-file policy. Its pre-hook refuses an edit of an
// existing file the session never read (NOT_READ) or whose content changed
// since (STALE_FILE), checks an explicit expected_sha256 argument on top of
// that (never instead of it), and leaves
// the hash on the call so the tool re-checks it under the file lock. Its
// post-hook records what the session has now seen: the files it read whole
// and the content it wrote.
type HashLock struct {
	sessions *orchestration.SessionStore
}

// NewHashLock returns the hash lock policy.
func NewHashLock(sessions *orchestration.SessionStore) *HashLock {
	return &HashLock{sessions: sessions}
}

func (h *HashLock) Pre(ctx context.Context, c *engine.Call) error {
	spec, known := c.Spec()
	if !known || spec.Group != engine.GroupEdit {
		return nil
	}
	rel, ok, err := c.Target()
	if err != nil || !ok {
		return err
	}
	want, hasWant, err := c.String("expected_sha256")
	if err != nil {
		return err
	}
	want = strings.ToLower(strings.TrimPrefix(want, "sha256:"))

	if c.ToolRunsNow() && (!hasWant || want != "") {
		// The tool runs next and checks Expect on the content it reads
		// under the file lock (Workspace.Edit): the file is read once,
		// there, not here as well.
		if done, err := h.expectRead(c, rel, want, hasWant); done {
			return err
		}
	}

	cur, err := c.WS.ReadFile(rel)
	exists := true
	if errors.Is(err, fs.ErrNotExist) {
		exists, err = false, nil
	}
	if err != nil {
		return err
	}
	actual := ""
	if exists {
		actual = engine.Hash(cur)
	}
	if !exists {
		if hasWant && want != "" {
			// The session expects a file that is not there; nothing of
			// anyone's content is disclosed by saying so.
			return stale(c, rel, want, "", "does not exist, but expected_sha256 names a content for it")
		}
		// A new file: it must still not exist when the tool writes it.
		c.SetExpect(rel, "")
		return nil
	}
	s, err := CallSession(c, h.sessions)
	if err != nil {
		return err
	}
	// expected_sha256 is a condition on top of the read, never a substitute
	// for it: a hash can be guessed, learnt from elsewhere or computed from
	// a copy, but only a read shows the session what it is about to destroy.
	// The refusal names no hash: the session has not seen this file.
	seen, read := s.Reads[rel]
	if !read {
		return &engine.Denial{Code: engine.NotRead, Path: rel, Intent: c.Intent,
			Message: fmt.Sprintf("%s exists and this session has not read it, so overwriting it could destroy work it has not seen", rel),
			Hint:    "call read_file on it first (the whole file), then write"}
	}
	if seen != actual {
		return stale(c, rel, seen, actual, "changed since this session last read it")
	}
	if hasWant && want != actual {
		return stale(c, rel, want, actual, "does not have the content named by expected_sha256")
	}
	c.SetExpect(rel, actual)
	return nil
}

// expectRead is Pre without reading the file, for a tool that checks Expect
// under its lock: a file that exists must have been read by the session, and
// the tool is told to expect what the session saw. done is false when the
// answer needs the file's content (an expected_sha256 other than what the
// session read, whose refusal names the current hash); Pre then reads it.
func (h *HashLock) expectRead(c *engine.Call, rel, want string, hasWant bool) (done bool, err error) {
	// rel is the call's target: the Lstat that resolved it tells whether
	// it exists (Edit checks again under the lock).
	_, ok, err := c.TargetStat()
	if !ok {
		_, err = c.WS.Stat(rel)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if hasWant && want != "" {
			return false, nil
		}
		c.SetExpect(rel, "")
		return true, nil
	}
	if err != nil {
		return true, err
	}
	s, err := CallSession(c, h.sessions)
	if err != nil {
		return true, err
	}
	seen, read := s.Reads[rel]
	if !read || (hasWant && want != seen) {
		return false, nil // Pre says which refusal, after reading
	}
	c.SetExpect(rel, seen)
	return true, nil
}

func stale(c *engine.Call, rel, want, actual, why string) error {
	return &engine.Denial{Code: engine.StaleFile, Path: rel, Intent: c.Intent,
		ExpectedSHA256: want, ActualSHA256: actual,
		Message: fmt.Sprintf("%s %s", rel, why),
		Hint:    "read the file again with read_file, then redo your change on the current content"}
}

func (h *HashLock) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	if c.Session == "" || (len(r.Reads) == 0 && len(r.Changes) == 0) {
		return nil
	}
	// Only an edit tool's own writes count as seen: after a command the
	// agent has not seen what the command wrote.
	spec, _ := c.Spec()
	wrote := spec.Group == engine.GroupEdit
	for i := range r.Changes {
		r.Changes[i].AfterHash() // hashed here, not under the session's lock
	}
	LaterSession(c, h.sessions, func(s *orchestration.Session) {
		if s.Reads == nil {
			s.Reads = map[string]string{}
		}
		for _, rd := range r.Reads {
			if rd.Whole {
				s.Reads[rd.Path] = rd.SHA256
			}
		}
		for i := range r.Changes {
			ch := &r.Changes[i]
			switch {
			case !wrote:
				delete(s.Reads, ch.Path)
			case ch.Violation:
				// Not the session's to claim: it must read the file first.
			case ch.Deleted:
				delete(s.Reads, ch.Path)
			default:
				s.Reads[ch.Path] = ch.AfterHash()
			}
		}
	})
	return nil
}
