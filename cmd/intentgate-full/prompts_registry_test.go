package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/prompts"
)

// promptSampleArgs holds, per tool, a valid value for each of its parameters
// in the workspace promptWorkspace builds. The test calls the tools with them.
var promptSampleArgs = map[string]map[string]any{
	"select_active_intent":       {"intent_id": "INT-001"},
	"read_file":                  {"path": "src/a.txt", "start_line": 1, "end_line": 2},
	"list_files":                 {"path": "src", "recursive": true},
	"search_files":               {"path": "src", "regex": "two", "file_pattern": "*.txt"},
	"list_code_definition_names": {"path": "src/a.go"},
	"codebase_search":            {"query": "function A", "path": "src"},
	"fetch_instructions":         {"task": "create_mode"},
	"write_to_file":              {"path": "src/new.txt", "content": "new\n"},
	"apply_diff":                 {"path": "src/a.txt", "diff": "<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE"},
	"insert_content":             {"path": "src/a.txt", "line": 1, "content": "zero"},
	"search_and_replace":         {"path": "src/a.txt", "search": "three", "replace": "THREE", "use_regex": false, "ignore_case": false, "start_line": 1, "end_line": 3},
	"execute_command":            {"command": "echo hello", "cwd": "src", "timeout": 30},
	"browser_action":             {"action": "close"},
	"ask_followup_question": {"question": "Which one?",
		"follow_up": []map[string]any{{"text": "the first"}, {"text": "the second", "mode": "code"}}},
	"attempt_completion": {"result": "done"},
	"switch_mode":        {"mode_slug": "ask", "reason": "only questions are left"},
	"new_task":           {"mode": "code", "message": "do the next step", "todos": "[ ] the next step"},
	"update_todo_list":   {"todos": "[x] one\n[-] two\n[ ] three"},
	// No MCP server is configured in the test workspace: the calls are
	// refused for that, never for a missing parameter.
	"use_mcp_tool":        {"server_name": "fs", "tool_name": "read_text_file", "arguments": map[string]any{"path": "src/a.txt"}},
	"access_mcp_resource": {"server_name": "docs", "uri": "docs://readme"},
}

// promptWorkspace is a governed workspace whose intent INT-001 owns src/**.
func promptWorkspace(t *testing.T) *gate.Runtime {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".orchestration/active_intents.yaml": "active_intents:\n  - id: INT-001\n    name: prompts test\n" +
			"    status: IN_PROGRESS\n    owned_scope: [\"src/**\"]\n",
		"src/a.txt": "one\ntwo\nthree\n",
		"src/a.go":  "package a\n\nfunc A() {}\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := gate.Open(dir, gate.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func promptDispatch(g *gate.Runtime, session, tool string, args map[string]any) (*engine.Result, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	c := &engine.Call{ID: session + "/" + tool, Session: session, Tool: tool, Args: raw,
		Agent: engine.Agent{Name: "prompts-test", Model: "test/model"}}
	return g.Dispatch(context.Background(), c)
}

// The tool definitions the model is given and the tools the engine runs are
// the same: the same names, the same groups, and for each tool the schema's
// "required" is exactly what the tool itself refuses to run without.
func TestPromptsMatchRegistry(t *testing.T) {
	t.Parallel()
	g := promptWorkspace(t)
	reg := g.Registry()
	tools := prompts.Tools()

	var described []string
	for _, tool := range tools {
		described = append(described, tool.Name)
	}
	for _, name := range described {
		if _, ok := reg.Lookup(name); !ok {
			t.Errorf("%s has a schema in internal/catalog/schemas but is not registered", name)
		}
	}
	for _, name := range reg.Names() {
		if !slices.Contains(described, name) {
			t.Errorf("%s is registered but has no schema in internal/catalog/schemas", name)
		}
	}

	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			spec, ok := reg.Lookup(tool.Name)
			if !ok {
				t.Skip("not registered (reported above)")
			}
			switch tool.Group {
			case "read", "edit", "command":
				if string(spec.Group) != tool.Group {
					t.Errorf("registry group = %s, prompts group = %s", spec.Group, tool.Group)
				}
			default:
				// Tools every mode has: the registry may file them under any
				// group, but not under one that needs an intent.
				if spec.Mutating() {
					t.Errorf("registry group = %s, which needs an intent; %s must be callable in every mode", spec.Group, tool.Name)
				}
			}
			sample, ok := promptSampleArgs[tool.Name]
			if !ok {
				t.Fatalf("no sample arguments for %s in promptSampleArgs", tool.Name)
			}
			required := map[string]any{}
			for _, p := range tool.Required {
				v, ok := sample[p]
				if !ok {
					t.Fatalf("no sample value for the required parameter %s", p)
				}
				required[p] = v
			}

			// Each required parameter is demanded by the tool: without it,
			// the call is refused with MISSING_PARAMETER naming it.
			for _, p := range tool.Required {
				args := map[string]any{}
				for k, v := range required {
					if k != p {
						args[k] = v
					}
				}
				session := fmt.Sprintf("prompts-%s-no-%s", tool.Name, p)
				promptPrepare(t, g, session)
				_, err := promptDispatch(g, session, tool.Name, args)
				d, denied := engine.AsDenial(err)
				switch {
				case !denied || d.Code != engine.MissingParameter:
					t.Errorf("without %s: err = %v, want a MISSING_PARAMETER denial naming %s", p, err, p)
				case d.Parameter != p:
					t.Errorf("without %s: MISSING_PARAMETER names %q (%s), want %q", p, d.Parameter, d.Message, p)
				}
			}

			// read_file takes one of path, files and args, so its schema
			// requires none (providers refuse a top-level anyOf); path alone
			// must be enough.
			if tool.Name == "read_file" && len(required) == 0 {
				required["path"] = sample["path"]
			}
			// Nothing else is demanded: with the required parameters alone,
			// no parameter is reported missing.
			session := "prompts-" + tool.Name + "-required-only"
			promptPrepare(t, g, session)
			_, err := promptDispatch(g, session, tool.Name, required)
			if d, denied := engine.AsDenial(err); denied && d.Code == engine.MissingParameter {
				t.Errorf("with only %v: MISSING_PARAMETER for %q, which the schema does not require", tool.Required, d.Parameter)
			}
		})
	}
}

// promptPrepare starts a session the way a model following the intent
// protocol would: it selects INT-001 and reads the file the edits target, so
// that no policy refuses a call before the tool sees its arguments.
func promptPrepare(t *testing.T, g *gate.Runtime, session string) {
	t.Helper()
	if _, err := promptDispatch(g, session, "select_active_intent", map[string]any{"intent_id": "INT-001"}); err != nil {
		t.Fatalf("select_active_intent: %v", err)
	}
	if _, err := promptDispatch(g, session, "read_file", map[string]any{"path": "src/a.txt"}); err != nil {
		t.Fatalf("read_file: %v", err)
	}
}

// The prompt command prints what prompts renders, with the workspace's root
// and intents filled in.
func TestPromptCommand(t *testing.T) {
	t.Parallel()
	g := promptWorkspace(t)
	dir := g.Root()
	run := func(o promptOptions) (string, string, error) {
		var out, errw strings.Builder
		err := runPrompt(&o, &out, &errw)
		return out.String(), errw.String(), err
	}

	out, errs, err := run(promptOptions{mode: "architect", format: "text", workspace: dir})
	if err != nil || errs != "" {
		t.Fatalf("text: err = %v, stderr = %q", err, errs)
	}
	for _, want := range []string{
		"The workspace root is " + filepath.ToSlash(dir) + ".",
		"- INT-001 [IN_PROGRESS] prompts test; owned_scope: src/**",
		"You are in Architect mode (architect).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}

	for format, key := range map[string]string{"openai": "function", "anthropic": "input_schema"} {
		out, _, err := run(promptOptions{mode: "ask", format: format, workspace: dir})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var defs []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &defs); err != nil {
			t.Fatalf("%s output is not a JSON array: %v", format, err)
		}
		if len(defs) != len(prompts.ForMode("ask")) || defs[0][key] == nil {
			t.Errorf("%s: %d definitions, first %v; want %d with %q", format, len(defs), defs[0], len(prompts.ForMode("ask")), key)
		}
	}

	if _, _, err := run(promptOptions{mode: "nope", format: "text", workspace: dir}); err == nil {
		t.Error("an unknown mode is accepted")
	}
	if _, _, err := run(promptOptions{mode: "code", format: "yaml", workspace: dir}); err == nil {
		t.Error("an unknown format is accepted")
	}

	// A broken intents file costs the prompt its intent list, not its output.
	if err := os.WriteFile(filepath.Join(dir, ".orchestration", "active_intents.yaml"), []byte("active_intents: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, err = run(promptOptions{mode: "code", format: "text", workspace: dir})
	if err != nil || !strings.Contains(out, "No intents were listed with this prompt.") || !strings.Contains(errs, "lists no intents") {
		t.Errorf("broken intents: err = %v, stderr = %q, intents line present = %v", err, errs, strings.Contains(out, "No intents were listed"))
	}
}

// prompts keeps its own table of the built-in modes so that a prompt can be
// rendered without a workspace; it must grant what the engine's mode policy
// grants.
func TestPromptModesMatchOrchestration(t *testing.T) {
	t.Parallel()
	want := map[string][]string{}
	for _, m := range orchestration.BuiltinModes().Modes {
		var gs []string
		for _, g := range m.Groups {
			gs = append(gs, g.Name+" "+g.FileRegex)
		}
		want[m.Slug] = gs
	}
	got := map[string][]string{}
	for _, m := range prompts.Modes() {
		var gs []string
		for _, g := range m.Groups {
			gs = append(gs, g.Name+" "+g.FileRegex)
		}
		got[m.Slug] = gs
	}
	for slug, gs := range want {
		if !slices.Equal(got[slug], gs) {
			t.Errorf("mode %s: prompts groups %q, orchestration groups %q", slug, got[slug], gs)
		}
	}
	for slug := range got {
		if _, ok := want[slug]; !ok {
			t.Errorf("prompts describes mode %s, which orchestration does not define", slug)
		}
	}
}
