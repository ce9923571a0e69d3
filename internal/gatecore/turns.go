package gatecore

import (
	"context"
	"sync"
)

// turns runs the calls of one session one at a time, in the order they
// arrive, so that an MCP client that sends select_active_intent and a write
// without waiting for the first answer gets the write judged under the
// intent it selected. Different sessions run concurrently.
type turns struct {
	mu sync.Mutex
	m  map[string]*turn
}

type turn struct {
	ch   chan struct{} // holds one token while the session's turn is taken
	refs int
}

type heldKey struct{ rt *Runtime }

// Hold takes the session's turn until release is called, for a sequence of
// calls that must not interleave with the session's other calls (the
// operations of one external agent's event). Dispatch, Authorize and
// Observe with the returned context run within the turn instead of waiting
// for it. An empty session has no turn to take.
func (rt *Runtime) Hold(ctx context.Context, session string) (context.Context, func(), error) {
	if session == "" {
		return ctx, func() {}, nil
	}
	if held, _ := ctx.Value(heldKey{rt}).(string); held == session {
		return ctx, func() {}, nil
	}
	t := &rt.turns
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*turn{}
	}
	tn := t.m[session]
	if tn == nil {
		tn = &turn{ch: make(chan struct{}, 1)}
		t.m[session] = tn
	}
	tn.refs++
	t.mu.Unlock()
	done := func() {
		t.mu.Lock()
		if tn.refs--; tn.refs == 0 {
			delete(t.m, session)
		}
		t.mu.Unlock()
	}
	select {
	case tn.ch <- struct{}{}:
	case <-ctx.Done():
		done()
		return ctx, nil, ctx.Err()
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			<-tn.ch
			done()
		})
	}
	return context.WithValue(ctx, heldKey{rt}, session), release, nil
}
