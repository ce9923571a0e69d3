package mcphub_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
)

// needServers returns the directory of the npm servers' executables, or
// skips; under CI=true a missing one fails, since .ci/run installs them.
func needServers(t *testing.T) string {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join("testdata", "servers", "node_modules", ".bin"))
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(bin, "mcp-server-filesystem"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and the npm MCP servers are required under CI (npm ci in testdata/servers): %v", err)
		}
		t.Skipf("needs node and `npm ci` in testdata/servers: %v", err)
	}
	return bin
}

const intents = `active_intents:
  - id: INT-001
    name: mcp
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

type env struct {
	t      *testing.T
	dir    string
	rt     *gate.Runtime
	ledger string

	mu       sync.Mutex
	asked    []mcphub.Request
	refuse   bool
	statuses []mcphub.Status
}

// newEnv is a governed workspace whose .roo/mcp.json names the two npm
// servers, opened as every front door opens it (gate.Open).
func newEnv(t *testing.T) *env {
	bin := needServers(t)
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs":    map[string]any{"command": filepath.Join(bin, "mcp-server-filesystem"), "args": []string{dir}},
		"every": map[string]any{"command": filepath.Join(bin, "mcp-server-everything"), "alwaysAllow": []string{"echo"}},
		"off":   map[string]any{"command": "false", "disabled": true},
	}})
	for name, body := range map[string]string{
		".orchestration/active_intents.yaml": intents,
		".roo/mcp.json":                      string(cfg),
		"src/a.txt":                          "one\ntwo\n",
		"docs/b.txt":                         "bee\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{t: t, dir: dir, ledger: filepath.Join(dir, ".orchestration", "agent_trace.jsonl")}
	opts := mcphub.ToolOptions{
		Approve: func(ctx context.Context, c *engine.Call, r mcphub.Request) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.asked = append(e.asked, r)
			if e.refuse && !r.AlwaysAllowed {
				return errors.New("the user denied this operation")
			}
			return nil
		},
		Status: func(c *engine.Call, s mcphub.Status) {
			e.mu.Lock()
			e.statuses = append(e.statuses, s)
			e.mu.Unlock()
		},
	}
	rt, err := gate.Open(dir, gate.Options{Version: "test", MCP: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e.rt = rt
	return e
}

func (e *env) call(session, tool string, args map[string]any) (*engine.Result, error) {
	raw, _ := json.Marshal(args)
	return e.rt.Dispatch(context.Background(), &engine.Call{ID: session + "-" + tool, Session: session, Tool: tool, Args: raw,
		Agent: engine.Agent{Name: "test", Model: "test/model"}})
}

func (e *env) denied(code engine.Code, session, tool string, args map[string]any) *engine.Denial {
	e.t.Helper()
	_, err := e.call(session, tool, args)
	d, ok := engine.AsDenial(err)
	if !ok || d.Code != code {
		e.t.Fatalf("%s %v = %v, want %s", tool, args, err, code)
	}
	return d
}

func (e *env) selectIntent(session string) {
	e.t.Helper()
	if _, err := e.call(session, hooks.SelectTool, map[string]any{"intent_id": "INT-001"}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) records() []*orchestration.Record {
	e.t.Helper()
	f, err := os.Open(e.ledger)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []*orchestration.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := orchestration.ParseRecord(sc.Bytes())
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func fsArgs(tool string, args map[string]any) map[string]any {
	return map[string]any{"server_name": "fs", "tool_name": tool, "arguments": args}
}

func TestFilesystemServerGoverned(t *testing.T) {
	e := newEnv(t)

	// A tool annotated read-only runs without an intent.
	r, err := e.call("s0", mcphub.UseToolName, fsArgs("read_text_file", map[string]any{"path": "src/a.txt"}))
	if err != nil || r.Output != "one\ntwo\n" {
		t.Fatalf("read_text_file = %+v, %v", r, err)
	}
	// Reading is still confined to the workspace.
	e.denied(engine.PathEscape, "s0", mcphub.UseToolName, fsArgs("read_text_file", map[string]any{"path": "../../etc/passwd"}))
	e.denied(engine.PathEscape, "s0", mcphub.UseToolName, fsArgs("read_multiple_files", map[string]any{"paths": []string{"src/a.txt", "/etc/passwd"}}))
	// A tool that is not read-only needs an intent.
	e.denied(engine.NoActiveIntent, "s0", mcphub.UseToolName, fsArgs("write_file", map[string]any{"path": "src/new.txt", "content": "x"}))

	e.selectIntent("s1")
	// In scope: allowed, done, and recorded with the content's hash.
	content := "hello\nfrom mcp\n"
	if _, err := e.call("s1", mcphub.UseToolName, fsArgs("write_file", map[string]any{"path": "src/new.txt", "content": content})); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "src/new.txt")); string(b) != content {
		t.Fatalf("src/new.txt = %q", b)
	}
	// An existing file is held to the hash lock, as write_to_file is: the
	// session must have read it whole, and it must not have changed since.
	abs := filepath.Join(e.dir, "src", "a.txt")
	edit := fsArgs("edit_file", map[string]any{"path": abs, "edits": []map[string]string{{"oldText": "two", "newText": "TWO"}}})
	if d := e.denied(engine.NotRead, "s1", mcphub.UseToolName, edit); d.Path != "src/a.txt" || d.Parameter != "path" {
		t.Errorf("unread edit refused with %+v", d)
	}
	e.denied(engine.NotRead, "s1", mcphub.UseToolName, fsArgs("write_file", map[string]any{"path": "src/a.txt", "content": "gone\n"}))
	// The MCP server's own read does not count: only intentgate's read_file
	// tells the session what the file holds.
	if _, err := e.call("s1", mcphub.UseToolName, fsArgs("read_text_file", map[string]any{"path": "src/a.txt"})); err != nil {
		t.Fatal(err)
	}
	e.denied(engine.NotRead, "s1", mcphub.UseToolName, edit)
	if _, err := e.call("s1", "read_file", map[string]any{"path": "src/a.txt"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(abs, []byte("one\ntwo\n\n"), 0o644) // changed behind the session's back
	e.denied(engine.StaleFile, "s1", mcphub.UseToolName, edit)
	if b, _ := os.ReadFile(abs); string(b) != "one\ntwo\n\n" {
		t.Fatalf("src/a.txt changed by refused calls: %q", b)
	}
	os.WriteFile(abs, []byte("one\ntwo\n"), 0o644)
	if _, err := e.call("s1", "read_file", map[string]any{"path": "src/a.txt"}); err != nil {
		t.Fatal(err)
	}
	// Absolute paths inside the scope are the same file.
	if _, err := e.call("s1", mcphub.UseToolName, edit); err != nil {
		t.Fatal(err)
	}
	// What the server wrote, the session has not seen: one more edit needs
	// one more read.
	e.denied(engine.NotRead, "s1", mcphub.UseToolName, fsArgs("edit_file", map[string]any{"path": "src/a.txt",
		"edits": []map[string]string{{"oldText": "one", "newText": "ONE"}}}))
	// Out of scope, by any path-like argument: refused, and nothing changed.
	e.denied(engine.ScopeViolation, "s1", mcphub.UseToolName, fsArgs("write_file", map[string]any{"path": "docs/c.txt", "content": "x"}))
	e.denied(engine.ScopeViolation, "s1", mcphub.UseToolName, fsArgs("move_file", map[string]any{"source": "src/a.txt", "destination": "docs/a.txt"}))
	e.denied(engine.ProtectedPath, "s1", mcphub.UseToolName, fsArgs("write_file", map[string]any{"path": ".roo/mcp.json", "content": "{}"}))
	e.denied(engine.PathEscape, "s1", mcphub.UseToolName, fsArgs("create_directory", map[string]any{"path": "src/../../x"}))
	// The arguments as a JSON string, as Roo Code's XML protocol sends them.
	e.denied(engine.ScopeViolation, "s1", mcphub.UseToolName, map[string]any{"server_name": "fs", "tool_name": "write_file",
		"arguments": `{"path":"docs/d.txt","content":"x"}`})
	for _, f := range []string{"docs/c.txt", "docs/a.txt", "docs/d.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err == nil {
			t.Errorf("%s was created by a refused call", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, ".roo/mcp.json")); string(b) == "{}" {
		t.Error(".roo/mcp.json was overwritten")
	}

	sum := sha256.Sum256([]byte(content))
	var created, edited, denials int
	for _, r := range e.records() {
		m := r.Meta
		if m.Tool != mcphub.UseToolName {
			t.Errorf("record of tool %q", m.Tool)
		}
		switch {
		case m.Decision == orchestration.DecisionDeny:
			denials++
		case r.Files[0].Path == "src/new.txt":
			created++
			if m.Intent != "INT-001" || m.AfterSHA256 != hex.EncodeToString(sum[:]) || m.Mutation != orchestration.MutationCreate {
				t.Errorf("record of src/new.txt: %+v", m)
			}
		case r.Files[0].Path == "src/a.txt":
			edited++
			ranges := r.Files[0].Conversations[0].Ranges
			if m.Mutation != orchestration.MutationModify || len(ranges) != 1 || ranges[0].StartLine != 2 || ranges[0].EndLine != 2 {
				t.Errorf("record of src/a.txt: %+v, ranges %+v", m, ranges)
			}
		}
	}
	// The read-only calls leave no record; each refusal does, as evidence.
	if created != 1 || edited != 1 || denials != 13 {
		t.Errorf("ledger: %d creations, %d edits, %d denials; want 1, 1, 13", created, edited, denials)
	}
}

func TestEverythingServer(t *testing.T) {
	e := newEnv(t)
	// A resource read (no intent needed).
	r, err := e.call("s0", mcphub.AccessResourceName, map[string]any{"server_name": "every",
		"uri": "demo://resource/dynamic/text/7"})
	if err != nil || !strings.Contains(r.Output, "7") {
		t.Fatalf("access_mcp_resource = %+v, %v", r, err)
	}
	// echo is not annotated read-only: it needs an intent.
	e.denied(engine.NoActiveIntent, "s0", mcphub.UseToolName, map[string]any{"server_name": "every", "tool_name": "echo",
		"arguments": map[string]any{"message": "hi"}})
	e.selectIntent("s1")
	e.mu.Lock()
	e.refuse, e.asked, e.statuses = true, nil, nil
	e.mu.Unlock()
	// Asked and refused: the tool does not run.
	if _, err := e.call("s1", mcphub.UseToolName, map[string]any{"server_name": "every", "tool_name": "get-sum",
		"arguments": map[string]any{"a": 2, "b": 3}}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("refused get-sum = %v", err)
	}
	// Approved in advance by alwaysAllow: asked with that flag, and runs.
	r, err = e.call("s1", mcphub.UseToolName, map[string]any{"server_name": "every", "tool_name": "echo",
		"arguments": map[string]any{"message": "hi there"}})
	if err != nil || !strings.Contains(r.Output, "hi there") {
		t.Fatalf("echo = %+v, %v", r, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.asked) != 2 || e.asked[0].ToolName != "get-sum" || e.asked[0].AlwaysAllowed || !e.asked[1].AlwaysAllowed ||
		e.asked[0].Arguments != `{"a":2,"b":3}` {
		t.Errorf("approvals asked: %+v", e.asked)
	}
	var got []string
	for _, s := range e.statuses {
		got = append(got, s.Status)
		if s.ExecutionID == "" {
			t.Errorf("status without executionId: %+v", s)
		}
	}
	if strings.Join(got, ",") != "started,output,completed" {
		t.Errorf("statuses = %v, want started,output,completed (none for the refused call)", got)
	}
	// Unknown and disabled servers, unknown tools: the model is told what exists.
	for _, args := range []map[string]any{
		{"server_name": "nope", "tool_name": "echo"},
		{"server_name": "off", "tool_name": "echo"},
		{"server_name": "every", "tool_name": "nope"},
	} {
		if _, err := e.call("s1", mcphub.UseToolName, args); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
}

func TestPromptSection(t *testing.T) {
	e := newEnv(t)
	p, err := gate.MCP(e.rt).Prompt(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## fs (", "- write_file: ", "- read_text_file (read-only): ", "## every (",
		"demo://resource/static/document/architecture.md", "demo://resource/dynamic/text/{resourceId}"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "## off") {
		t.Error("the disabled server is listed")
	}
}
