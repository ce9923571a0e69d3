package hooks

import (
	"fmt"
	"maps"
	"sync"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// HeldSessions keeps in memory what calls derive for their session (the
// hashes they read or wrote, usage counters), for sessions that live in one
// process only: an MCP connection's own session, whose id that process made
// and which ends with the connection. Such a call then writes no session
// file: a read writes nothing at all, a write only the file and its ledger
// record. The held changes are written with the next change that must be
// durable (selecting an intent, switching modes), when more than
// heldSessionsMax calls wait, and by Flush when the connection ends.
//
// Losing them in a crash is what losing an unsynced session write is
// (SessionStore.UpdateDerived): a lost read hash makes the next write
// NOT_READ or STALE_FILE, never an unsafe allow. A change written late is
// still a hash of content the session saw, so another process sharing the
// id (it would have to name it) is at worst refused.
type HeldSessions struct {
	store *orchestration.SessionStore

	mu   sync.Mutex
	held map[string][]func(*orchestration.Session) error
}

// heldSessionsMax bounds the calls whose changes wait for one session.
const heldSessionsMax = 128

type heldKey struct{ store *orchestration.SessionStore }

// NewHeldSessions returns the holder for sessions of store, the store the
// engine's hooks and SessionWriter use.
func NewHeldSessions(store *orchestration.SessionStore) *HeldSessions {
	return &HeldSessions{store: store, held: map[string][]func(*orchestration.Session) error{}}
}

// Hold marks c so that the changes its hooks queue for its session wait in
// h, unless one of them must be durable. Call it before the call runs.
func (h *HeldSessions) Hold(c *engine.Call) { c.SetMemo(heldKey{h.store}, h) }

// Flush writes the changes held for session id, if any.
func (h *HeldSessions) Flush(id string) error {
	edits := h.take(id)
	if len(edits) == 0 {
		return nil
	}
	_, err := h.store.UpdateDerived(id, func(s *orchestration.Session) error { return applyEdits(s, edits) })
	if err != nil {
		return fmt.Errorf("record the held effects of session %q: %w", id, err)
	}
	return nil
}

// heldOf returns the holder c was marked with for store, or nil.
func heldOf(c *engine.Call, store *orchestration.SessionStore) *HeldSessions {
	if v, ok := c.Memo(heldKey{store}); ok {
		return v.(*HeldSessions)
	}
	return nil
}

// add holds edits for session id; false, holding nothing, when that would
// pass the bound.
func (h *HeldSessions) add(id string, edits []func(*orchestration.Session) error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.held[id])+len(edits) > heldSessionsMax {
		return false
	}
	h.held[id] = append(h.held[id], edits...)
	return true
}

// take removes and returns the edits held for session id.
func (h *HeldSessions) take(id string) []func(*orchestration.Session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	edits := h.held[id]
	delete(h.held, id)
	return edits
}

// over returns sess as its held changes make it. sess is not changed: it
// may be a store's copy that others share. Held changes come from
// LaterSession, whose callers change only the maps copied here.
func (h *HeldSessions) over(id string, sess *orchestration.Session) (*orchestration.Session, error) {
	h.mu.Lock()
	edits := h.held[id]
	h.mu.Unlock()
	if len(edits) == 0 {
		return sess, nil
	}
	cp := *sess
	cp.Reads = maps.Clone(sess.Reads)
	if cp.Reads == nil {
		cp.Reads = map[string]string{}
	}
	cp.Usage = maps.Clone(sess.Usage)
	if err := applyEdits(&cp, edits); err != nil {
		return nil, err
	}
	return &cp, nil
}

func applyEdits(s *orchestration.Session, edits []func(*orchestration.Session) error) error {
	for _, fn := range edits {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}
