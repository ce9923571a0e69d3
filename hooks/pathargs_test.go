package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
)

func TestPathArgs(t *testing.T) {
	for _, tc := range []struct {
		args string
		want string // key=value;...
	}{
		{`{"path":"a","content":"b"}`, "path=a"},
		{`{"paths":["a","b"],"pattern":"*.go"}`, "paths[0]=a;paths[1]=b"},
		{`{"source":"a","destination":"b","to":"bob@example.com"}`, "destination=b;source=a"},
		{`{"edits":[{"file_path":"x","oldText":"y"}],"dryRun":false}`, "edits[0].file_path=x"},
		{`{"uri":"https://example.com/a","url":"file:///w/a%20b"}`, "url=/w/a b"},
		{`{"note":"file:rel/name","targetDir":"d","outputFile":"o","TargetPath":"t"}`, "TargetPath=t;note=rel/name;outputFile=o;targetDir=d"},
		{`{"path":5,"paths":[null,true]}`, ""},
		{`{"path":{"inner":"x","file":"y"}}`, "path.file=y;path.inner=x"},
	} {
		got, err := hooks.PathArgs(json.RawMessage(tc.args))
		if err != nil {
			t.Errorf("PathArgs(%s) = %v", tc.args, err)
			continue
		}
		var parts []string
		for _, p := range got {
			parts = append(parts, p.Key+"="+filepath.ToSlash(p.Value))
		}
		if s := strings.Join(parts, ";"); s != tc.want {
			t.Errorf("PathArgs(%s) = %s, want %s", tc.args, s, tc.want)
		}
	}
	for _, bad := range []string{
		`{"uri":"file://attacker.example/etc/passwd"}`,
		strings.Repeat(`{"a":`, 40) + `"x"` + strings.Repeat(`}`, 40),
		`{"path":`,
	} {
		if _, err := hooks.PathArgs(json.RawMessage(bad)); err == nil {
			t.Errorf("PathArgs(%.40s...) = nil error, want one", bad)
		}
	}
}

func FuzzPathArgs(f *testing.F) {
	f.Add(`{"path":"a","paths":["b"],"uri":"file:///c"}`)
	f.Add(`{"x":[{"file_path":"file://localhost/d"}]}`)
	f.Fuzz(func(t *testing.T, args string) {
		got, err := hooks.PathArgs(json.RawMessage(args))
		if err != nil {
			return
		}
		for _, p := range got {
			if hasFile := strings.HasPrefix(strings.ToLower(p.Value), "file:"); hasFile && p.Value != "" {
				// A decoded URI path never keeps its scheme.
				if strings.HasPrefix(strings.ToLower(filepath.ToSlash(p.Value)), "file://") {
					t.Fatalf("undecoded URI %q", p.Value)
				}
			}
		}
	})
}

// extTool stands for an MCP tool: it mutates unless its arguments say
// "readonly": true, and its own arguments sit under "arguments".
type extTool struct{}

func (extTool) Run(ctx context.Context, c *engine.Call) (*engine.Result, error) {
	return &engine.Result{Output: "ran"}, nil
}

func (extTool) Mutates(c *engine.Call) bool {
	raw, _ := c.Arg("readonly")
	return string(raw) != "true"
}

func TestPathArgScope(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		".orchestration/active_intents.yaml": intentsYAML,
		".intentignore":                      "src/secret/**\n",
		"src/a.txt":                          "a\n",
		"docs/b.txt":                         "b\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "src", "link")); err != nil {
		t.Fatal(err)
	}
	ws, err := engine.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	orch := filepath.Join(dir, ".orchestration")
	store, err := orchestration.OpenIntentStore(filepath.Join(orch, "active_intents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sessions := orchestration.OpenSessions(filepath.Join(orch, "sessions"))
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: hooks.SelectTool, Group: engine.GroupRead, Tool: hooks.SelectActiveIntent(store, sessions, orch)})
	reg.Register(engine.Spec{Name: "ext", Group: engine.GroupMCP, Tool: extTool{}})
	argsOf := func(c *engine.Call) (json.RawMessage, string, bool) {
		if c.Tool != "ext" {
			return nil, "", false
		}
		raw, _ := c.Arg("arguments")
		return raw, "", true
	}
	eng := engine.New(reg)
	eng.Use(hooks.Gatekeeper(reg, store, sessions), hooks.PathArgScope(reg, ws, store, argsOf))
	call := func(session string, args string) error {
		_, err := eng.Dispatch(context.Background(), &engine.Call{ID: "c", Session: session, Tool: "ext", Args: json.RawMessage(args), WS: ws})
		return err
	}
	check := func(session, args string, want engine.Code) {
		t.Helper()
		err := call(session, args)
		d, denied := engine.AsDenial(err)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", args, err)
		case want != "" && (!denied || d.Code != want):
			t.Errorf("%s: %v, want %s", args, err, want)
		}
	}
	// No intent: read-only calls pass if their paths stay in the workspace.
	check("s0", `{"readonly":true,"arguments":{"path":"docs/b.txt"}}`, "")
	check("s0", `{"readonly":true,"arguments":{"path":"."}}`, "")
	check("s0", `{"readonly":true,"arguments":{"path":"../x"}}`, engine.PathEscape)
	check("s0", `{"readonly":true,"arguments":{"path":"src/link/x"}}`, engine.PathEscape)
	check("s0", `{"readonly":true,"arguments":{"uri":"file://`+filepath.ToSlash(outside)+`/x"}}`, engine.PathEscape)
	check("s0", `{"arguments":{"path":"src/a.txt"}}`, engine.NoActiveIntent)

	if _, err := eng.Dispatch(context.Background(), &engine.Call{ID: "c", Session: "s1", Tool: hooks.SelectTool,
		Args: json.RawMessage(`{"intent_id":"INT-001"}`), WS: ws}); err != nil {
		t.Fatal(err)
	}
	check("s1", `{"arguments":{"path":"src/a.txt"}}`, "")
	check("s1", `{"arguments":{"path":"`+filepath.ToSlash(filepath.Join(dir, "src", "new.txt"))+`"}}`, "")
	check("s1", `{"arguments":{"path":"docs/b.txt"}}`, engine.ScopeViolation)
	check("s1", `{"arguments":{"paths":["src/a.txt","docs/b.txt"]}}`, engine.ScopeViolation)
	check("s1", `{"arguments":{"source":"src/a.txt","destination":"docs/a.txt"}}`, engine.ScopeViolation)
	check("s1", `{"arguments":{"path":"."}}`, engine.ScopeViolation)
	check("s1", `{"arguments":{"path":"src/../docs/b.txt"}}`, engine.PathEscape)
	check("s1", `{"arguments":{"path":"~/src/a.txt"}}`, engine.PathEscape)
	check("s1", `{"arguments":{"path":"src/secret/k"}}`, engine.ProtectedPath)
	check("s1", `{"arguments":{"path":".orchestration/agent_trace.jsonl"}}`, engine.ProtectedPath)
	check("s1", `{"arguments":{"note":"file:///etc/passwd"}}`, engine.PathEscape)
	check("s1", `{"arguments":{"path":"src/link/x"}}`, engine.PathEscape)
}
