package adapter

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestPatchOps(t *testing.T) {
	type op struct {
		kind    OpKind
		path    string
		content string
	}
	for _, tc := range []struct {
		name  string
		patch string
		want  []op
		err   string
	}{
		{"add", "*** Begin Patch\n*** Add File: src/a.txt\n+one\n+two\n*** End Patch\n",
			[]op{{OpWrite, "src/a.txt", "one\ntwo\n"}}, ""},
		{"update, delete and move", "*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** Delete File: b.go\n" +
			"*** Update File: c.go\n*** Move to: d/c.go\n@@\n z\n*** End Patch",
			[]op{{OpEdit, "a.go", ""}, {OpDelete, "b.go", ""}, {OpDelete, "c.go", ""}, {OpWrite, "d/c.go", ""}}, ""},
		{"heredoc around it, CRLF", "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Add File: x\r\n+1\r\n*** End Patch\r\nEOF\r\n",
			[]op{{OpWrite, "x", "1\n"}}, ""},
		{"paths kept as sent", "*** Begin Patch\n*** Add File: src/../../etc/x\n+1\n*** End Patch\n",
			[]op{{OpWrite, "src/../../etc/x", "1\n"}}, ""},
		{"no patch", "echo hi", nil, "Begin Patch"},
		{"no file", "*** Begin Patch\n*** End Patch\n", nil, "names no file"},
		{"move without update", "*** Begin Patch\n*** Move to: x\n*** End Patch\n", nil, "follows no update"},
		{"empty path", "*** Begin Patch\n*** Delete File: \n*** End Patch\n", nil, "no path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := PatchOps(tc.patch)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("PatchOps = %v, %v; want an error about %q", ops, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []op
			for _, o := range ops {
				got = append(got, op{o.Kind, o.Path, o.Content})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("PatchOps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMCPName(t *testing.T) {
	for _, tc := range []struct {
		in, server, name string
		ok               bool
	}{
		{"mcp__intentgate__select_active_intent", "intentgate", "select_active_intent", true},
		{"mcp__my__server__tool", "my__server", "tool", true},
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__x", "", "", false},
		{"mcp____tool", "", "", false},
		{"Write", "", "", false},
	} {
		s, n, ok := mcpName(tc.in)
		if s != tc.server || n != tc.name || ok != tc.ok {
			t.Errorf("mcpName(%q) = %q, %q, %v; want %q, %q, %v", tc.in, s, n, ok, tc.server, tc.name, tc.ok)
		}
	}
}

// A pre and a post event of one call, from agents that give no call id,
// share the tool input: it keys the call whatever its spelling.
func TestCallKey(t *testing.T) {
	a := &Event{Tool: "run_shell_command", Input: json.RawMessage(`{"command":"ls","description":"list"}`)}
	b := &Event{Tool: "run_shell_command", Input: json.RawMessage(`{ "description": "list", "command": "ls" }`)}
	c := &Event{Tool: "run_shell_command", Input: json.RawMessage(`{"command":"ls -a","description":"list"}`)}
	if a.CallKey() != b.CallKey() || a.CallKey() == c.CallKey() {
		t.Errorf("keys %s %s %s: want the first two equal, the third different", a.CallKey(), b.CallKey(), c.CallKey())
	}
	if k := (&Event{CallID: "toolu_1", Tool: "Bash"}).CallKey(); k != "toolu_1" {
		t.Errorf("CallKey with a call id = %q", k)
	}
}

func TestRenderNeverAllows(t *testing.T) {
	// intentgate only refuses: "allow" would skip the user's own approval.
	for _, name := range Names() {
		d, _ := Lookup(name)
		for _, k := range []Kind{PreTool, PostTool, SessionStart, Prompt, Stop, Unknown} {
			out := string(d.Render(&Event{Agent: name, Name: "x", Kind: k}, Reply{Context: "c"}))
			if strings.Contains(out, `"allow"`) || strings.Contains(out, `"approve"`) {
				t.Errorf("%s kind %d renders %s", name, k, out)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/a","content":"x"}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/a"},"tool_response":{"type":"text","file":{"content":"x","numLines":1,"totalLines":1}}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}}`,
		`{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"/a"}}`,
		`{"hook_event_name":"beforeMCPExecution","tool_name":"select_active_intent","tool_input":"{\"intent_id\":\"INT-1\"}"}`,
		`{"hook_event_name":"afterFileEdit","file_path":"/a","edits":[{"old_string":"a","new_string":"b"}]}`,
		`{"hookName":"PreToolUse","taskId":"t","preToolUse":{"toolName":"use_mcp_tool","parameters":{"server_name":"s","tool_name":"t","arguments":"{}"}}}`,
		`[]`, `null`, `"x"`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, name := range Names() {
			d, _ := Lookup(name)
			ev, err := d.Parse([]byte(raw))
			if ev == nil {
				t.Fatalf("%s: Parse returned no event (err %v)", name, err)
			}
			for _, r := range []Reply{{}, {Deny: `{"error":"X","message":"m"}`, Message: "m"}, {Context: "c", Block: "b"}} {
				out := d.Render(ev, r)
				if out == nil {
					if name != "claude-code" && name != "codex" {
						t.Fatalf("%s prints nothing; it must always print JSON", name)
					}
					continue
				}
				if !json.Valid(out) {
					t.Fatalf("%s renders invalid JSON %q", name, out)
				}
			}
		}
	})
}

func FuzzPatchOps(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n")
	f.Fuzz(func(t *testing.T, body string) {
		ops, err := PatchOps(body)
		if err == nil && len(ops) == 0 {
			t.Fatal("no error and no ops")
		}
		for _, op := range ops {
			if op.Path == "" {
				t.Fatalf("an op without a path: %+v", op)
			}
		}
	})
}
