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

// The path arguments of MCP tools, through the production wiring: no MCP
// server is configured, so use_mcp_tool counts as mutating (an unknown
// server's tool may change anything) and is judged before any connection;
// access_mcp_resource reads, so its file: URIs need only stay inside.
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
	rt := openRuntime(t, dir)
	root := filepath.ToSlash(rt.Root())
	call := func(session, tool, args string) error {
		_, err := rt.Dispatch(context.Background(), &engine.Call{ID: "c", Session: session, Tool: tool, Args: json.RawMessage(args)})
		return err
	}
	// A call the policies let through reaches the tool, which refuses it
	// for the server nobody configured.
	check := func(session, tool, args string, want engine.Code) {
		t.Helper()
		err := call(session, tool, args)
		d, denied := engine.AsDenial(err)
		switch {
		case want == "" && (err == nil || !strings.Contains(err.Error(), "no such MCP server")):
			t.Errorf("%s %s: %v, want the policies to let it reach the tool", tool, args, err)
		case want != "" && (!denied || d.Code != want):
			t.Errorf("%s %s: %v, want %s", tool, args, err, want)
		}
	}
	use := func(args string) string {
		return `{"server_name":"fs","tool_name":"write","arguments":` + args + `}`
	}
	resource := func(uri string) string { return `{"server_name":"docs","uri":"` + uri + `"}` }

	// No intent: reads pass if their paths stay in the workspace; a tool
	// that may write needs an intent.
	check("s0", "access_mcp_resource", resource("file://"+root+"/docs/b.txt"), "")
	check("s0", "access_mcp_resource", resource("file://"+root+"/src/link/x"), engine.PathEscape)
	check("s0", "access_mcp_resource", resource("file://"+filepath.ToSlash(outside)+"/x"), engine.PathEscape)
	check("s0", "access_mcp_resource", resource("docs://readme"), "")
	check("s0", "use_mcp_tool", use(`{"path":"src/a.txt"}`), engine.NoActiveIntent)

	if err := call("s1", hooks.SelectTool, `{"intent_id":"INT-001"}`); err != nil {
		t.Fatal(err)
	}
	// The hash lock holds for MCP tools too: an existing file must have
	// been read in full by the session first.
	check("s1", "use_mcp_tool", use(`{"path":"src/a.txt"}`), engine.NotRead)
	if err := call("s1", "read_file", `{"path":"src/a.txt"}`); err != nil {
		t.Fatal(err)
	}
	check("s1", "use_mcp_tool", use(`{"path":"src/a.txt"}`), "")
	check("s1", "use_mcp_tool", use(`{"path":"`+filepath.ToSlash(filepath.Join(rt.Root(), "src", "new.txt"))+`"}`), "")
	check("s1", "use_mcp_tool", use(`{"path":"docs/b.txt"}`), engine.ScopeViolation)
	check("s1", "use_mcp_tool", use(`{"paths":["src/a.txt","docs/b.txt"]}`), engine.ScopeViolation)
	check("s1", "use_mcp_tool", use(`{"source":"src/a.txt","destination":"docs/a.txt"}`), engine.ScopeViolation)
	check("s1", "use_mcp_tool", use(`{"path":"."}`), engine.ScopeViolation)
	check("s1", "use_mcp_tool", use(`{"path":"../x"}`), engine.PathEscape)
	// Relative to the workspace, where an unconfigured server's paths
	// resolve, this is docs/b.txt.
	check("s1", "use_mcp_tool", use(`{"path":"src/../docs/b.txt"}`), engine.ScopeViolation)
	check("s1", "use_mcp_tool", use(`{"path":"~/src/a.txt"}`), engine.PathEscape)
	check("s1", "use_mcp_tool", use(`{"path":"src/secret/k"}`), engine.ProtectedPath)
	check("s1", "use_mcp_tool", use(`{"path":".orchestration/agent_trace.jsonl"}`), engine.ProtectedPath)
	check("s1", "use_mcp_tool", use(`{"note":"file:///etc/passwd"}`), engine.PathEscape)
	check("s1", "use_mcp_tool", use(`{"path":"src/link/x"}`), engine.PathEscape)
}
