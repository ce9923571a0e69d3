package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
)

// env is a workspace governed by every policy, opened with gate.Open as
// every front door opens one.
type env struct {
	t    *testing.T
	dir  string
	orch string
	rt   *gate.Runtime
}

const intentsYAML = `active_intents:
  - id: INT-001
    name: one
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

func newEnv(t *testing.T, files map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	files[".orchestration/active_intents.yaml"] = intentsYAML
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openEnv(t, dir)
}

// openEnv opens dir afresh, as a new process would.
func openEnv(t *testing.T, dir string) *env {
	t.Helper()
	return &env{t: t, dir: dir, orch: filepath.Join(dir, ".orchestration"), rt: openRuntime(t, dir)}
}

// openRuntime opens the governed workspace at dir with the production
// wiring, closed when the test ends.
func openRuntime(t *testing.T, dir string) *gate.Runtime {
	t.Helper()
	rt, err := gate.Open(dir, gate.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func (e *env) call(tool string, args map[string]any) (*engine.Result, error) {
	raw, _ := json.Marshal(args)
	return e.rt.Dispatch(context.Background(), &engine.Call{ID: "c", Session: "s", Tool: tool, Args: raw})
}

func (e *env) must(tool string, args map[string]any) *engine.Result {
	e.t.Helper()
	r, err := e.call(tool, args)
	if err != nil {
		e.t.Fatalf("%s(%v) = %v, want success", tool, args, err)
	}
	return r
}

func (e *env) want(code engine.Code, tool string, args map[string]any) *engine.Denial {
	e.t.Helper()
	_, err := e.call(tool, args)
	d, ok := engine.AsDenial(err)
	if !ok || d.Code != code {
		e.t.Fatalf("%s(%v) = %v, want %s", tool, args, err, code)
	}
	return d
}

// writeIntents replaces active_intents.yaml the way editors do: a new file
// renamed over the old one.
func (e *env) writeIntents(body string) {
	e.t.Helper()
	p := filepath.Join(e.orch, "active_intents.yaml")
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		e.t.Fatal(err)
	}
}

func TestIntentEditsTakeEffectMidSession(t *testing.T) {
	e := newEnv(t, map[string]string{})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})
	e.must("write_to_file", map[string]any{"path": "src/a.go", "content": "a\n"})

	e.writeIntents(`active_intents:
  - id: INT-001
    name: one
    status: COMPLETED
    owned_scope: ["src/**"]
`)
	e.want(engine.IntentNotActive, "write_to_file", map[string]any{"path": "src/b.go", "content": "b\n"})

	// A broken edit keeps the last good version (COMPLETED) in force and
	// says why.
	e.writeIntents("active_intents:\n  - id: INT-001\n    status: [\n")
	e.want(engine.IntentNotActive, "write_to_file", map[string]any{"path": "src/b.go", "content": "b\n"})
	if e.rt.IntentsProblem() == nil {
		t.Error("Problem() = nil after a broken edit")
	}

	e.writeIntents(`active_intents:
  - id: INT-001
    name: one
    status: IN_PROGRESS
    owned_scope: ["docs/**"]
`)
	e.want(engine.ScopeViolation, "write_to_file", map[string]any{"path": "src/b.go", "content": "b\n"})
	e.must("write_to_file", map[string]any{"path": "docs/b.md", "content": "b\n"})

	e.writeIntents("active_intents: []\n")
	e.want(engine.UnknownIntent, "write_to_file", map[string]any{"path": "docs/c.md", "content": "c\n"})
}

func TestHashLock(t *testing.T) {
	body := "one\ntwo\nthree\n"
	sum := engine.Hash([]byte(body))
	e := newEnv(t, map[string]string{"src/a.txt": body, "src/b.txt": body})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})

	// A partial read is not a baseline.
	e.must("read_file", map[string]any{"path": "src/a.txt", "start_line": 1, "end_line": 2})
	e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.txt", "content": "x\n"})

	// An explicit precondition never stands in for a read, and the refusal
	// does not disclose the hash of the unread file.
	d := e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.txt", "content": "x\n", "expected_sha256": engine.Hash([]byte("other"))})
	if d.ActualSHA256 != "" || d.ExpectedSHA256 != "" {
		t.Errorf("NOT_READ hashes = %q / %q, want none", d.ExpectedSHA256, d.ActualSHA256)
	}
	e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/a.txt", "content": "x\n", "expected_sha256": "sha256:" + sum})

	// After a whole read, the precondition is checked on top of it.
	e.must("read_file", map[string]any{"path": "src/a.txt"})
	d = e.want(engine.StaleFile, "write_to_file", map[string]any{"path": "src/a.txt", "content": "x\n", "expected_sha256": engine.Hash([]byte("other"))})
	if d.ActualSHA256 != sum || d.ExpectedSHA256 != engine.Hash([]byte("other")) {
		t.Errorf("STALE_FILE hashes = %s / %s, want the file's %s as actual", d.ExpectedSHA256, d.ActualSHA256, sum)
	}
	e.must("write_to_file", map[string]any{"path": "src/a.txt", "content": "x\n", "expected_sha256": "sha256:" + sum})

	// After its own write, the session knows the content: it may write again.
	e.must("write_to_file", map[string]any{"path": "src/a.txt", "content": "y\n"})

	// A file created under the session's nose by someone else is stale.
	e.must("read_file", map[string]any{"path": "src/b.txt"})
	if err := os.WriteFile(filepath.Join(e.dir, "src", "b.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.want(engine.StaleFile, "write_to_file", map[string]any{"path": "src/b.txt", "content": "z\n"})

	// What a command wrote has not been seen by the session.
	e.must("read_file", map[string]any{"path": "src/b.txt"})
	e.must("execute_command", map[string]any{"command": "echo more >> src/b.txt"})
	e.want(engine.NotRead, "write_to_file", map[string]any{"path": "src/b.txt", "content": "z\n"})

	// The session's reads survive into a new process (the old one writes
	// what it batched when it ends).
	e.must("read_file", map[string]any{"path": "src/b.txt"})
	if err := e.rt.FlushDerived(); err != nil {
		t.Fatal(err)
	}
	e2 := openEnv(t, e.dir)
	e2.must("write_to_file", map[string]any{"path": "src/b.txt", "content": "z\n"})
}

func TestReplacedOrchestrationRefusesEverything(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.txt": "a\n"})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "ledger"), filepath.Join(e.orch, "intent_map.json")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	d := e.want(engine.HookError, "read_file", map[string]any{"path": "src/a.txt"})
	if d.Message == "" {
		t.Error("HOOK_ERROR without a message")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("intentgate wrote outside the workspace: %v", ents)
	}
	if !errors.Is(d, engine.ErrHookError) {
		t.Error("errors.Is(HOOK_ERROR) = false")
	}
}

// A command that changes a file too large for the snapshot to keep: its old
// content is unknown, so no before hash is claimed, and the whole file is
// ranged.
func TestUnknownOldContentHasNoBeforeHash(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 70000) // 1.19 MB, over the 1 MiB kept per file
	e := newEnv(t, map[string]string{"src/big.txt": big})
	e.must("select_active_intent", map[string]any{"intent_id": "INT-001"})
	e.must("execute_command", map[string]any{"command": "echo tail >> src/big.txt"})
	var last *orchestration.Record
	if err := orchestration.ScanLedger(filepath.Join(e.orch, "agent_trace.jsonl"), func(_ int, _ []byte, rec *orchestration.Record, err error) error {
		if err == nil && rec.Meta != nil && rec.Meta.Tool == "execute_command" {
			last = rec
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if last == nil {
		t.Fatal("no record of the command's change")
	}
	if last.Meta.BeforeSHA256 != "" || last.Meta.AfterSHA256 != engine.Hash([]byte(big+"tail\n")) {
		t.Errorf("before/after = %q/%q, want no before hash and the new file's hash", last.Meta.BeforeSHA256, last.Meta.AfterSHA256)
	}
	r := last.Files[0].Conversations[0].Ranges
	if len(r) != 1 || r[0].StartLine != 1 || r[0].EndLine != 70001 {
		t.Errorf("ranges = %+v, want the whole file 1-70001", r)
	}
}
