package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
)

// sessionFile is the one file of session "s" in the env's store.
func (e *env) sessionFile() string {
	e.t.Helper()
	m, err := filepath.Glob(filepath.Join(e.orch, "sessions", "s-*.json"))
	if err != nil || len(m) != 1 {
		e.t.Fatalf("session files of s: %v %v", m, err)
	}
	return m[0]
}

// A call's hooks leave their session changes for the end of the call: the
// session file is the same file (not rewritten) while the post-hooks run,
// and holds the call's read hash after it.
func TestSessionWrittenOnceAtTheEndOfTheCall(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.go": "package a\n"})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})
	p := e.sessionFile()
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var during os.FileInfo
	e.rt.Engine().After(engine.PostFunc(func(ctx context.Context, c *engine.Call, r *engine.Result) error {
		during, err = os.Stat(p)
		return err
	}))
	e.must("read_file", map[string]any{"path": "src/a.go"})
	if during == nil || !os.SameFile(before, during) {
		t.Fatal("the session file was rewritten while the call's post-hooks ran; its changes must wait for the end of the call")
	}
	// The runtime writes what calls derive in batches; flushing writes
	// this call's.
	if err := e.rt.FlushDerived(); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Fatal("the session file was not written at the end of the call")
	}
	s, err := orchestration.OpenSessions(filepath.Join(e.orch, "sessions")).Load("s")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Reads["src/a.go"], engine.Hash([]byte("package a\n")); got != want {
		t.Fatalf("read hash of src/a.go = %q, want %q", got, want)
	}
}

// The read hashes are written without fsync: a crash may lose the last
// session write. Losing it must refuse the next overwrite, never allow it.
func TestLostSessionWriteRefusesTheWrite(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.go": "package a\n"})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})
	p := e.sessionFile()
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	e.rt.Stores().Sessions.Batch(time.Hour) // the batch stays unwritten until flushed
	e.must("read_file", map[string]any{"path": "src/a.go"})
	// A crash with the read hash still in the process's batch: a new
	// process does not have it.
	e2 := openEnv(t, e.dir)
	e2.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 2\n"})

	// A crash after the batch was written but before it reached the disk:
	// the session file is back to what it was before the read.
	if err := e.rt.FlushDerived(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 2\n"})

	// A session file torn by the crash is refused, never taken as empty.
	if err := os.WriteFile(p, old[:len(old)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call("write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 3\n"}); err == nil {
		t.Fatal("a write was allowed with a torn session file")
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "src", "a.go")); string(b) != "package a\n" {
		t.Fatalf("src/a.go = %q, want it untouched", b)
	}
}

var _ engine.Finisher = hooks.NewSessionWriter(nil)
