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
		{"no file: Codex changes nothing", "*** Begin Patch\n*** End Patch\n", nil, ""},
		{"move without update", "*** Begin Patch\n*** Move to: x\n*** End Patch\n", nil, "not a valid file header"},
		{"empty path", "*** Begin Patch\n*** Delete File: \n*** End Patch\n", nil, "not a valid file header"},
		// Codex trims every header of Unicode white space before matching it.
		{"header indented by spaces", "*** Begin Patch\n  *** Update File: .orchestration/active_intents.yaml\n@@\n-a\n+b\n*** End Patch",
			[]op{{OpEdit, ".orchestration/active_intents.yaml", ""}}, ""},
		{"header indented by a tab", "*** Begin Patch\n\t*** Add File: .codex/hooks.json\n+{}\n*** End Patch",
			[]op{{OpWrite, ".codex/hooks.json", "{}\n"}}, ""},
		{"header indented by NBSP", "*** Begin Patch\n\u00a0*** Delete File: .mcp.json\n*** End Patch",
			[]op{{OpDelete, ".mcp.json", ""}}, ""},
		{"header indented by U+3000 after an add", "*** Begin Patch\n*** Add File: src/a\n+x\n\u3000*** Update File: .gemini/settings.json\n@@\n-a\n+b\n\u3000*** End Patch\u3000",
			[]op{{OpWrite, "src/a", "x\n"}, {OpEdit, ".gemini/settings.json", ""}}, ""},
		{"markers padded on both sides", "  *** Begin Patch  \n*** Delete File: x\t\n *** End Patch ",
			[]op{{OpDelete, "x", ""}}, ""},
		// Inside an update, a line starting with a space is context: Codex
		// does not read a header there.
		{"space-indented header inside an update is context", "*** Begin Patch\n*** Update File: src/a\n@@\n a\n *** Update File: .orchestration/x\n+b\n*** End Patch",
			[]op{{OpEdit, "src/a", ""}}, ""},
		// A tab-indented one ends the chunk, and Codex then needs "@@".
		{"tab-indented header after a chunk", "*** Begin Patch\n*** Update File: src/a\n@@\n-a\n+b\n\t*** Delete File: .orchestration/x\n*** End Patch",
			nil, "chunk must start with @@"},
		{"move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch",
			[]op{{OpDelete, "a", ""}, {OpWrite, "b", ""}}, ""},
		{"indented move is not a move", "*** Begin Patch\n*** Update File: a\n *** Move to: b\n+y\n*** End Patch",
			[]op{{OpEdit, "a", ""}}, ""},
		{"update without chunks", "*** Begin Patch\n*** Update File: a\n*** End Patch", nil, "has no chunks"},
		{"unknown header", "*** Begin Patch\n*** Rename File: a\n*** End Patch", nil, "not a valid file header"},
		{"no end", "*** Begin Patch\n*** Delete File: a\n", nil, "End Patch"},
		{"heredoc inside the patch text", "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
			[]op{{OpDelete, "a", ""}}, ""},
		{"cd prefix", "cd sub && apply_patch <<'PATCH'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nPATCH\n",
			[]op{{OpDelete, "sub/a", ""}}, ""},
		{"path keeps inner spaces", "*** Begin Patch\n*** Delete File:  lead\n*** End Patch",
			[]op{{OpDelete, " lead", ""}}, ""},
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
	f.Add("*** Begin Patch\n\u3000*** Update File: a\n@@\n-x\n*** End Patch")
	f.Fuzz(func(t *testing.T, body string) {
		ops, err := PatchOps(body)
		if err != nil {
			return
		}
		for _, op := range ops {
			if op.Path == "" {
				t.Fatalf("an op without a path: %+v", op)
			}
		}
		// Every header Codex would read, whatever white space surrounds it,
		// names a file among the ops: none escapes the checks.
		named := map[string]bool{}
		for _, op := range ops {
			named[op.Path] = true
		}
		if _, _, isShell := shellPatch(body); isShell {
			return // paths are joined to the cd directory
		}
		for _, l := range rustLines(trimU(body)) {
			h := trimU(l)
			for _, m := range []string{patchAdd, patchDelete, patchUpdate} {
				if p, ok := strings.CutPrefix(h, m); ok && !named[p] && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "-") {
					// A header-like line Codex reads as a chunk line
					// (starting with ' ', '+' or '-') is content.
					t.Fatalf("header %q is not among the ops %+v", l, ops)
				}
			}
		}
	})
}

func FuzzShellWholeRead(f *testing.F) {
	f.Add("cat src/a.txt")
	f.Add("sed -n '1,$p' README.md")
	f.Add("cat a; rm -rf b")
	f.Fuzz(func(t *testing.T, cmd string) {
		p, ok := ShellWholeRead(cmd)
		if !ok {
			return
		}
		// A recognised read runs nothing else: no shell syntax at all.
		if strings.ContainsAny(cmd, ";&|<>`$(){}\n") && !strings.Contains(cmd, "'1,$p'") && !strings.Contains(cmd, "1,\\$p") {
			t.Fatalf("%q taken for a plain read of %q", cmd, p)
		}
		if p == "" || strings.HasPrefix(p, "-") {
			t.Fatalf("%q: path %q", cmd, p)
		}
	})
}

func FuzzCline3Parse(f *testing.F) {
	f.Add(`{"hookName":"tool_call","taskId":"t","workspaceRoots":["/w"],"tool_call":{"id":"1","name":"read_files","input":{"files":[{"path":"/w/a"}]}}}`)
	f.Add(`{"hookName":"tool_result","taskId":"t","tool_result":{"id":"1","name":"read_files","input":["a","b"],"output":[{"result":"1 | x","success":true}]}}`)
	f.Add(`{"hookName":"tool_call","tool_call":{"name":"run_commands","input":{"commands":[{"command":"ls","args":["-l"]}]}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		ev, err := cline{}.Parse([]byte(raw))
		if ev == nil {
			t.Fatal("nil event")
		}
		if err != nil {
			return
		}
		for _, op := range ev.Ops {
			switch op.Kind {
			case OpRead, OpWrite, OpEdit, OpDelete:
				if op.Path == "" {
					t.Fatalf("%s op without a path: %+v", op.Kind, op)
				}
			}
		}
		_ = cline{}.Render(ev, Reply{Deny: "x"})
	})
}
