package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
)

// heldCall runs a call of session "s" whose derived session changes h holds.
func (e *env) heldCall(h *hooks.HeldSessions, tool string, args map[string]any) (*engine.Result, error) {
	raw, _ := json.Marshal(args)
	c := &engine.Call{ID: "c", Session: "s", Tool: tool, Args: raw}
	h.Hold(c)
	return e.rt.Dispatch(context.Background(), c)
}

func (e *env) diskSession() *orchestration.Session {
	e.t.Helper()
	s, err := orchestration.OpenSessions(filepath.Join(e.orch, "sessions")).Load("s")
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// Held calls write no session file, yet the session's next calls see what
// they derived; a durable change writes them with it, and so does Flush.
func TestHeldSessions(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.go": "package a\n", "src/b.go": "package b\n"})
	h := hooks.NewHeldSessions(e.rt.Stores().Sessions)
	if _, err := e.heldCall(h, "select_active_intent", map[string]any{"intent_id": "INT-001"}); err != nil {
		t.Fatal(err)
	}
	p := e.sessionFile()
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.heldCall(h, "read_file", map[string]any{"path": "src/a.go"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.heldCall(h, "write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 2\n"}); err != nil {
		t.Fatalf("write after a held read: %v", err)
	}
	if after, err := os.Stat(p); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the session file was written by held calls (%v)", err)
	}
	if got := e.diskSession().Reads; len(got) != 0 {
		t.Fatalf("session on disk has reads %v before anything durable", got)
	}
	// A call not held sees only the disk: the read is not there.
	e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 3\n"})

	// A durable change (selecting the intent again) writes the held ones.
	if _, err := e.heldCall(h, "read_file", map[string]any{"path": "src/b.go"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.heldCall(h, "select_active_intent", map[string]any{"intent_id": "INT-001"}); err != nil {
		t.Fatal(err)
	}
	s := e.diskSession()
	if got, want := s.Reads["src/a.go"], engine.Hash([]byte("package a // 2\n")); got != want {
		t.Errorf("after a durable change, read hash of src/a.go = %q, want %q", got, want)
	}
	if got, want := s.Reads["src/b.go"], engine.Hash([]byte("package b\n")); got != want {
		t.Errorf("after a durable change, read hash of src/b.go = %q, want %q", got, want)
	}
	if u := s.Usage["read_file"]; u.Attempts != 2 {
		t.Errorf("read_file usage %+v, want 2 attempts", u)
	}

	// Flush writes what is held; a second Flush has nothing to write.
	if _, err := e.heldCall(h, "write_to_file", map[string]any{"path": "src/b.go", "content": "package b // 2\n"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Flush("s"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.diskSession().Reads["src/b.go"], engine.Hash([]byte("package b // 2\n")); got != want {
		t.Errorf("after Flush, hash of src/b.go = %q, want %q", got, want)
	}
	flushed, _ := os.Stat(p)
	if err := h.Flush("s"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(p); !os.SameFile(flushed, again) {
		t.Error("a Flush with nothing held rewrote the session file")
	}
}

// No more than a bounded number of calls wait: past it, the call writes
// everything held.
func TestHeldSessionsBounded(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("src/f%03d.go", i)] = "package f\n"
	}
	e := newEnv(t, files)
	h := hooks.NewHeldSessions(e.rt.Stores().Sessions)
	if _, err := e.heldCall(h, "select_active_intent", map[string]any{"intent_id": "INT-001"}); err != nil {
		t.Fatal(err)
	}
	written := 0
	for i := range 200 {
		if _, err := e.heldCall(h, "read_file", map[string]any{"path": fmt.Sprintf("src/f%03d.go", i)}); err != nil {
			t.Fatal(err)
		}
		if n := len(e.diskSession().Reads); n > written {
			written = n
		}
		if i+1-written > 128 {
			t.Fatalf("after %d reads only %d are on disk: more than 128 calls wait", i+1, written)
		}
	}
	if written == 0 {
		t.Fatal("200 held reads wrote nothing")
	}
}
