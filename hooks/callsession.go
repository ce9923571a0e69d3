package hooks

import (
	"context"
	"fmt"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// The session of a call is loaded once, by the first hook that needs it,
// and shared by the others through the call (engine.Call.Memo). What the
// hooks derive from the call for the session (the hashes it read or wrote,
// its usage counters) is queued on the call and written once, at its end,
// by the SessionWriter: one session write per call, without fsync.

type callSessionKey struct{ store *orchestration.SessionStore }

type callSession struct {
	sess  *orchestration.Session
	err   error
	edits []func(*orchestration.Session) error
	// durable is set when a queued change must survive a crash (a mode
	// switch: losing it could bring back a mode that allows more).
	durable bool
}

func callSessionOf(c *engine.Call, store *orchestration.SessionStore) *callSession {
	key := callSessionKey{store}
	if v, ok := c.Memo(key); ok {
		return v.(*callSession)
	}
	cs := &callSession{}
	c.SetMemo(key, cs)
	return cs
}

// CallSession returns the session of the call, loaded from store at most
// once per call. The returned session is shared: read it, never change it
// (queue changes with LaterSession).
func CallSession(c *engine.Call, store *orchestration.SessionStore) (*orchestration.Session, error) {
	cs := callSessionOf(c, store)
	if cs.sess == nil && cs.err == nil {
		cs.sess, cs.err = store.LoadShared(c.Session)
		if h := heldOf(c, store); h != nil && cs.err == nil {
			cs.sess, cs.err = h.over(c.Session, cs.sess)
		}
	}
	return cs.sess, cs.err
}

// LaterSession queues a change of the call's session for the end of the
// call, where the SessionWriter applies every queued change in one update
// under the session's lock, to the session as it is on disk then.
func LaterSession(c *engine.Call, store *orchestration.SessionStore, fn func(*orchestration.Session)) {
	cs := callSessionOf(c, store)
	cs.edits = append(cs.edits, func(s *orchestration.Session) error { fn(s); return nil })
}

// laterSessionDurable queues a change that the end of the call writes with
// fsync, together with the others.
func laterSessionDurable(c *engine.Call, store *orchestration.SessionStore, fn func(*orchestration.Session) error) {
	cs := callSessionOf(c, store)
	cs.edits = append(cs.edits, fn)
	cs.durable = true
}

// SessionWriter writes the session changes a call's hooks queued, once at
// the end of the call (engine.Finisher). The changes are derived state,
// written without fsync (SessionStore.UpdateDerived): a crash that loses
// them loses read hashes and counters, which refuses a later write
// (NOT_READ, STALE_FILE) and never allows one. Safe for concurrent calls:
// each call has its own queue, and the update holds the session's lock.
type SessionWriter struct {
	sessions *orchestration.SessionStore
}

var _ engine.Finisher = (*SessionWriter)(nil)

// NewSessionWriter returns the finisher for the sessions of store.
func NewSessionWriter(sessions *orchestration.SessionStore) *SessionWriter {
	return &SessionWriter{sessions: sessions}
}

// Finish applies the queued changes of the call's session, if any.
func (w *SessionWriter) Finish(ctx context.Context, c *engine.Call) error {
	cs := callSessionOf(c, w.sessions)
	if len(cs.edits) == 0 || c.Session == "" {
		cs.edits, cs.durable = nil, false
		return nil
	}
	edits, durable := cs.edits, cs.durable
	cs.edits, cs.durable = nil, false
	if h := heldOf(c, w.sessions); h != nil {
		if !durable && h.add(c.Session, edits) {
			cs.sess = nil // the next load sees the held changes
			return nil
		}
		edits = append(h.take(c.Session), edits...)
	}
	update := w.sessions.UpdateDerived
	if durable {
		update = w.sessions.Update
	}
	s, err := update(c.Session, func(s *orchestration.Session) error {
		for _, fn := range edits {
			if err := fn(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the effects of call %s (%s) in session %q: %w", c.ID, c.Tool, c.Session, err)
	}
	cs.sess, cs.err = s, nil
	return nil
}

// The intents of a call are asked for once, by the first hook that needs
// them, so that every hook of one call judges it by the same set, and the
// intents file is checked once per call.

type callIntentsKey struct{}

type callIntents struct {
	src Intents
	set *orchestration.IntentSet
	err error
}

// CallIntents returns the intent set in force for c, asked of intents at
// most once per call.
func CallIntents(c *engine.Call, intents Intents) (*orchestration.IntentSet, error) {
	if v, ok := c.Memo(callIntentsKey{}); ok {
		if ci := v.(*callIntents); ci.src == intents {
			return ci.set, ci.err
		}
	}
	set, err := intents.Current()
	c.SetMemo(callIntentsKey{}, &callIntents{src: intents, set: set, err: err})
	return set, err
}
