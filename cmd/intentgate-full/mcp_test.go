package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/internal/mcpserver"
	"github.com/intentgate/intentgate/prompts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server, driven by real clients: the Go SDK's, in this process and
// against the built binary, and the TypeScript SDK's (testdata/mcp-client).

const mcpIntents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

// mcpConnect serves the workspace in this process and connects a Go SDK
// client named client to it.
func mcpConnect(t *testing.T, m *mcpserver.Server, client string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		<-done
	})
	return cs
}

func mcpServe(t *testing.T, ws string) *mcpserver.Server {
	t.Helper()
	rt, err := gate.Open(ws, gate.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return mcpserver.New(rt, "", mcpserver.Options{Version: version})
}

// mcpCall calls a tool and returns whether it is an error result and its text.
func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("CallTool(%s): content %T, want text", tool, c)
		}
		b.WriteString(tc.Text)
	}
	return res.IsError, b.String()
}

func TestMCPGoClient(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/keep.txt": "keep\n"})
	m := mcpServe(t, ws)
	cs := mcpConnect(t, m, "go-client")
	ctx := context.Background()

	// Every tool of prompts/, with its schema as given to models.
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool
	}
	for _, want := range prompts.Tools() {
		tool, ok := got[want.Name]
		if !ok {
			t.Errorf("tools/list lacks %s", want.Name)
			continue
		}
		if tool.Description != want.Description {
			t.Errorf("%s: description differs from prompts/", want.Name)
		}
		if a, b := canonical(t, tool.InputSchema), canonical(t, want.Parameters()); a != b {
			t.Errorf("%s: inputSchema\n%s\nwant\n%s", want.Name, a, b)
		}
	}
	if len(got) != len(prompts.Tools()) {
		t.Errorf("tools/list has %d tools, want %d", len(got), len(prompts.Tools()))
	}

	// Before an intent: refused, as the denial JSON.
	isErr, text := mcpCall(t, cs, "write_to_file", map[string]any{"path": "src/a.txt", "content": "a\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "NO_ACTIVE_INTENT" {
		t.Fatalf("write before select: isError=%v %+v, want NO_ACTIVE_INTENT", isErr, d)
	}
	if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"}); isErr || !strings.Contains(text, "INT-001") {
		t.Fatalf("select_active_intent: isError=%v %q", isErr, text)
	}
	if isErr, text := mcpCall(t, cs, "write_to_file", map[string]any{"path": "src/a.txt", "content": "a\n", "line_count": 1}); isErr {
		t.Fatalf("in-scope write: %s", text)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "src", "a.txt")); err != nil || string(b) != "a\n" {
		t.Fatalf("src/a.txt = %q, %v", b, err)
	}
	isErr, text = mcpCall(t, cs, "write_to_file", map[string]any{"path": "docs/b.md", "content": "b\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "SCOPE_VIOLATION" || d.Path != "docs/b.md" {
		t.Fatalf("out-of-scope write: isError=%v %+v, want SCOPE_VIOLATION on docs/b.md", isErr, d)
	}
	// A tool that fails says why, in words.
	isErr, text = mcpCall(t, cs, "read_file", map[string]any{"path": "src/missing.txt"})
	if !isErr || !strings.Contains(text, "missing.txt") || strings.HasPrefix(text, "{") {
		t.Fatalf("reading a missing file: isError=%v %q, want a tool error", isErr, text)
	}

	// The ledger knows the session and the client.
	e := &hookEnv{t: t, ws: ws}
	rec := e.lastRecord("src/a.txt")
	if ig := rec.Metadata.IG; !strings.HasPrefix(ig.Session, "mcp-") || ig.Agent != "go-client" || ig.Intent != "INT-001" {
		t.Errorf("ledger record: session %q agent %q intent %q", ig.Session, ig.Agent, ig.Intent)
	}
	if got := rec.ranges(t, "a\n"); strings.Join(got, ",") != "1-1" {
		t.Errorf("ranges %v, want 1-1", got)
	}

	// Another connection is another session: no intent yet.
	other := mcpConnect(t, m, "go-client-2")
	isErr, text = mcpCall(t, other, "write_to_file", map[string]any{"path": "src/c.txt", "content": "c\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "NO_ACTIVE_INTENT" {
		t.Fatalf("second connection: isError=%v %+v, want NO_ACTIVE_INTENT", isErr, d)
	}
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// TestMCPGoClientBinary runs the built server over stdio: nothing but MCP on
// stdout (the client would fail on anything else), logs on stderr.
func TestMCPGoClientBinary(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, nil)
	cmd := exec.Command(e2eBinary(t), "mcp", "--workspace", ws, "--verbose")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-stdio", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"}); isErr {
		t.Fatal(text)
	}
	if isErr, text := mcpCall(t, cs, "write_to_file", map[string]any{"path": "src/x.txt", "content": "x\n", "line_count": 1}); isErr {
		t.Fatal(text)
	}
	isErr, text := mcpCall(t, cs, "write_to_file", map[string]any{"path": "x.txt", "content": "x\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "SCOPE_VIOLATION" {
		t.Fatalf("out-of-scope write: isError=%v %+v", isErr, d)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "SCOPE_VIOLATION") {
		t.Errorf("stderr has no log of the denial:\n%s", stderr.String())
	}
}

// TestMCPUngoverned: started outside any governed workspace (a user-wide
// registration does that), the server refuses every call and creates nothing.
func TestMCPUngoverned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(e2eBinary(t), "mcp")
	cmd.Dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-stdio", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"})
	if d := decodeDenial(t, text); !isErr || d.Code != "HOOK_ERROR" || !strings.Contains(d.Message, "not governed") {
		t.Errorf("select in an ungoverned directory: isError=%v %+v", isErr, d)
	}
	cs.Close()
	if _, err := os.Lstat(filepath.Join(dir, ".orchestration")); !os.IsNotExist(err) {
		t.Errorf(".orchestration/ was created in an ungoverned directory (%v)", err)
	}
}

// TestMCPOneShotPipe sends every request and closes stdin at once: each
// request still gets its answer (the SDK alone would drop them,
// modelcontextprotocol/go-sdk#1061).
func TestMCPOneShotPipe(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, nil)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_to_file","arguments":{"path":"docs/x.md","content":"x","line_count":1}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(e2eBinary(t), "mcp", "--workspace", ws)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("intentgate mcp: %v\n%s", err, stderr.String())
	}
	ids := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		ids[string(msg.ID)] = msg.Result
	}
	for _, id := range []string{"1", "2", "3"} {
		if ids[id] == nil {
			t.Errorf("no answer to request %s; stdout:\n%s", id, stdout.String())
		}
	}
	var call struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(ids["3"], &call); err != nil || !call.IsError || len(call.Content) != 1 {
		t.Fatalf("answer to the call: %s (%v)", ids["3"], err)
	}
	if d := decodeDenial(t, call.Content[0].Text); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("denial %+v, want NO_ACTIVE_INTENT", d)
	}
}

// TestMCPTypeScriptClient runs testdata/mcp-client/client.mjs, the official
// TypeScript SDK's client, against the built server. It needs node and the
// client's node_modules (`npm ci` in testdata/mcp-client, which .ci/run does).
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "mcp-client")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		msg := "the TypeScript MCP client needs node and `npm ci` in cmd/intentgate-full/testdata/mcp-client: " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ws := e2eWorkspace(t, mcpIntents, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", e2eBinary(t), ws)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Tools []struct {
			Name     string   `json:"name"`
			Required []string `json:"required"`
		} `json:"tools"`
		Select, InScope, OutOfScope struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	if out.Server.Name != "intentgate" {
		t.Errorf("server name %q", out.Server.Name)
	}
	want := map[string][]string{}
	for _, tool := range prompts.Tools() {
		want[tool.Name] = tool.Required
	}
	for _, tool := range out.Tools {
		req, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
		}
		if strings.Join(req, ",") != strings.Join(tool.Required, ",") {
			t.Errorf("%s: required %v, want %v", tool.Name, tool.Required, req)
		}
		delete(want, tool.Name)
	}
	if len(want) > 0 {
		t.Errorf("tools missing from tools/list: %v", keysOfStrings(want))
	}
	if out.Select.IsError || !strings.Contains(out.Select.Text, "INT-001") {
		t.Errorf("select_active_intent: %+v", out.Select)
	}
	if out.InScope.IsError {
		t.Errorf("in-scope write: %s", out.InScope.Text)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "src", "hello.txt")); err != nil || string(b) != "hello from node\n" {
		t.Errorf("src/hello.txt = %q, %v", b, err)
	}
	if d := decodeDenial(t, out.OutOfScope.Text); !out.OutOfScope.IsError || d.Code != "SCOPE_VIOLATION" || d.Path != "docs/nope.md" {
		t.Errorf("out-of-scope write: isError=%v %+v", out.OutOfScope.IsError, d)
	}
	rec := (&hookEnv{t: t, ws: ws}).lastRecord("src/hello.txt")
	if rec.Metadata.IG.Agent != "intentgate-ts-client" {
		t.Errorf("ledger agent %q, want the client's name", rec.Metadata.IG.Agent)
	}
}

func keysOfStrings(m map[string][]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
