package gatecore

import (
	"context"
	"sync"
	"testing"
)

// One session's turns are taken one at a time, in order; another session's
// turn is free meanwhile; a turn held in a context is re-entered, not waited
// for.
func TestHold(t *testing.T) {
	rt := &Runtime{}
	ctx := context.Background()
	held, release, err := rt.Hold(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// Re-entering within the held context does not wait.
	_, inner, err := rt.Hold(held, "s1")
	if err != nil {
		t.Fatal(err)
	}
	inner()
	// Another session is not held up.
	_, other, err := rt.Hold(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	other()

	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	waiting := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		close(waiting)
		_, rel, err := rt.Hold(ctx, "s1")
		if err != nil {
			t.Error(err)
			return
		}
		note("second")
		rel()
	}()
	<-waiting
	note("first done")
	release()
	<-done
	if len(order) != 2 || order[0] != "first done" {
		t.Errorf("order %v: the second turn began before the first ended", order)
	}
	// A cancelled wait gives up.
	_, r1, _ := rt.Hold(ctx, "s3")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := rt.Hold(cctx, "s3"); err == nil {
		t.Error("Hold with a cancelled context took a held turn")
	}
	r1()
	if len(rt.turns.m) != 0 {
		t.Errorf("turns left behind: %v", rt.turns.m)
	}
}
