package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toolsResult is a dispatch result with the data a front door sees.
type toolsResult struct {
	result
	Data map[string]json.RawMessage `json:"data"`
	// Refusal is the denial's text, which result leaves out.
	Refusal *struct {
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"denial"`
}

// toolsCall sends one call on s and decodes its answer with its data.
func toolsCall(s *session, tool string, args map[string]any) toolsResult {
	s.t.Helper()
	s.send(tool, args)
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("reading the result of %s: %v", tool, err)
	}
	var r toolsResult
	if err := json.Unmarshal(line, &r.result); err != nil {
		s.t.Fatalf("result %q: %v", line, err)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("result %q: %v", line, err)
	}
	return r
}

func toolsOK(t *testing.T, s *session, tool string, args map[string]any) toolsResult {
	t.Helper()
	r := toolsCall(s, tool, args)
	if !r.OK {
		t.Fatalf("%s %v: denial %+v, error %q", tool, args, r.Denial, r.Error)
	}
	return r
}

// toolsLedger returns the ledger's allowed records of tool, in order, as the
// path, the ranges and the file's hash after the change.
type toolsRecord struct {
	path   string
	ranges [][2]int
	hashes []string
}

func toolsLedger(t *testing.T, ws, tool string) []toolsRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []toolsRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			ledgerLine
			Metadata struct {
				IG struct {
					Tool     string `json:"tool"`
					Decision string `json:"decision"`
				} `json:"dev.intentgate"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Metadata.IG.Tool != tool || rec.Metadata.IG.Decision != "allow" || len(rec.Files) != 1 {
			continue
		}
		r := toolsRecord{path: rec.Files[0].Path}
		for _, rg := range rec.Files[0].Conversations[0].Ranges {
			r.ranges = append(r.ranges, [2]int{rg.Start, rg.End})
			r.hashes = append(r.hashes, rg.Hash)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// intentgate dispatch drives every tool, and the ledger ranges after
// insert_content and search_and_replace are exactly the lines that changed.
func TestDispatchDrivesEveryTool(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{
		".gitignore":     "*.log\n",
		"src/app.go":     "package src\n\n// App runs.\nfunc App() {\n\tprintln(\"one\")\n\tprintln(\"two\")\n}\n",
		"src/notes.txt":  "alpha\nbeta\ngamma\ndelta\n",
		"src/debug.log":  "alpha\n",
		"src/web/ui.ts":  "export class UI {\n  render() {\n    return 1;\n  }\n}\n",
		"docs/plan.md":   "# plan\n",
		"src/edit/d.txt": "one\ntwo\nthree\n",
	})
	s := startDispatch(t, ws, "every-tool")

	toolsOK(t, s, "select_active_intent", map[string]any{"intent_id": "INT-001"})

	r := toolsOK(t, s, "list_files", map[string]any{"path": "."})
	if r.Output != ".gitignore\n.orchestration/\ndocs/\nsrc/" {
		t.Errorf("list_files . = %q", r.Output)
	}
	for _, p := range []string{"..", "../", "src/../.."} {
		if r := toolsCall(s, "list_files", map[string]any{"path": p}); r.code() != "PATH_ESCAPE" {
			t.Errorf("list_files %q: %+v, want PATH_ESCAPE", p, r)
		}
	}
	r = toolsOK(t, s, "list_files", map[string]any{"path": "src/", "recursive": true})
	if want := "app.go\nnotes.txt\nedit/\nedit/d.txt\nweb/\nweb/ui.ts"; r.Output != want {
		t.Errorf("list_files src/ recursive = %q, want %q", r.Output, want)
	}
	r = toolsOK(t, s, "search_files", map[string]any{"path": "src", "regex": "alpha|println\\(\"two", "file_pattern": "*.txt"})
	if want := "Found 1 result.\n\n# src/notes.txt\n  1 | alpha\n  2 | beta\n----"; r.Output != want {
		t.Errorf("search_files = %q, want %q", r.Output, want)
	}
	r = toolsOK(t, s, "list_code_definition_names", map[string]any{"path": "src/app.go"})
	if want := "# app.go\n4--7 | func App() {\n"; r.Output != want {
		t.Errorf("list_code_definition_names = %q, want %q", r.Output, want)
	}
	r = toolsOK(t, s, "list_code_definition_names", map[string]any{"path": "src/web"})
	if want := "# ui.ts\n1--5 | export class UI {\n\n"; r.Output != want {
		t.Errorf("list_code_definition_names dir = %q, want %q", r.Output, want)
	}

	toolsOK(t, s, "read_file", map[string]any{"path": "src/notes.txt"})
	// "alpha beta gamma delta" + two lines before line 3.
	r = toolsOK(t, s, "insert_content", map[string]any{"path": "src/notes.txt", "line": 3, "content": "new one\nnew two"})
	// Then "beta" and "delta" change: lines 2 and 6 of the new file.
	// Literal text: the pattern's syntax matches nothing here.
	if r := toolsOK(t, s, "search_and_replace", map[string]any{"path": "src/notes.txt", "search": "^(beta|delta)$", "replace": "[$1]", "use_regex": false}); !strings.HasPrefix(r.Output, "No changes needed") {
		t.Errorf("literal search_and_replace: %q", r.Output)
	}
	r = toolsOK(t, s, "search_and_replace", map[string]any{"path": "src/notes.txt", "search": "(b|d)e(ta|lta)", "replace": "$1E$2", "use_regex": true})
	// A line range: only "new two" (line 4) changes, though "new one" matches too.
	toolsOK(t, s, "search_and_replace", map[string]any{"path": "src/notes.txt", "search": "new", "replace": "NEW", "start_line": 4, "end_line": 5})
	// Appending with 0: Roo Code leaves an empty line after the final newline.
	toolsOK(t, s, "insert_content", map[string]any{"path": "src/notes.txt", "line": 0, "content": "omega"})
	// A new file.
	toolsOK(t, s, "insert_content", map[string]any{"path": "src/new.txt", "line": 0, "content": "first\nsecond"})

	got, err := os.ReadFile(filepath.Join(ws, "src", "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "alpha\nbEta\nnew one\nNEW two\ngamma\ndElta\n\nomega\n"; string(got) != want {
		t.Fatalf("src/notes.txt = %q, want %q", got, want)
	}
	wantRanges := map[string][][][2]int{
		// Worked out by hand from the edits above.
		"insert_content":     {{{3, 4}}, {{7, 8}}, {{1, 2}}},
		"search_and_replace": {{{2, 2}, {6, 6}}, {{4, 4}}},
	}
	for tool, want := range wantRanges {
		recs := toolsLedger(t, ws, tool)
		var gotRanges [][][2]int
		for _, rec := range recs {
			gotRanges = append(gotRanges, rec.ranges)
		}
		if fmt.Sprint(gotRanges) != fmt.Sprint(want) {
			t.Errorf("%s ledger ranges = %v, want %v", tool, gotRanges, want)
		}
	}
	// The latest ranges hash what the file holds.
	last := toolsLedger(t, ws, "insert_content")[1]
	for i, rg := range last.ranges {
		if h := rangeHash(got, rg[0], rg[1]); h != last.hashes[i] {
			t.Errorf("range %v: content_hash %s, recomputed %s", rg, last.hashes[i], h)
		}
	}

	r = toolsOK(t, s, "update_todo_list", map[string]any{"todos": "[x] list\n[-] edit\n[ ] ship"})
	var todos []map[string]string
	if err := json.Unmarshal(r.Data["todos"], &todos); err != nil || len(todos) != 3 || todos[1]["status"] != "in_progress" {
		t.Errorf("update_todo_list data = %s (%v)", r.Data["todos"], err)
	}
	r = toolsOK(t, s, "ask_followup_question", map[string]any{"question": "Ship now?",
		"follow_up": []map[string]any{{"text": "Yes", "mode": "code"}, {"text": "Plan first", "mode": "architect"}}})
	if !strings.Contains(string(r.Data["question"]), `"text":"Ship now?"`) {
		t.Errorf("ask_followup_question data = %s", r.Data["question"])
	}
	r = toolsOK(t, s, "new_task", map[string]any{"mode": "debug", "message": "find the bug", "todos": "[ ] reproduce"})
	if !strings.Contains(string(r.Data["task"]), `"mode":"debug"`) {
		t.Errorf("new_task data = %s", r.Data["task"])
	}
	r = toolsOK(t, s, "attempt_completion", map[string]any{"result": "Notes updated."})
	if !strings.Contains(string(r.Data["completion"]), `"result":"Notes updated."`) {
		t.Errorf("attempt_completion data = %s", r.Data["completion"])
	}
	r = toolsOK(t, s, "execute_command", map[string]any{"command": "true"})
	if string(r.Data["exit_code"]) != "0" {
		t.Errorf("execute_command data = %v", r.Data)
	}
	r = toolsOK(t, s, "switch_mode", map[string]any{"mode_slug": "architect", "reason": "plan the next step"})
	if string(r.Data["mode"]) != `"architect"` {
		t.Errorf("switch_mode data = %s", r.Data["mode"])
	}
	if r := toolsCall(s, "execute_command", map[string]any{"command": "true"}); r.code() != "TOOL_NOT_ALLOWED" {
		t.Errorf("execute_command in architect mode: %+v", r)
	}

	s.close()
	out, err := exec.Command(e2eBinary(t), "session", "show", "every-tool", "-w", ws).CombinedOutput()
	if err != nil {
		t.Fatalf("session show: %v\n%s", err, out)
	}
	for _, want := range []string{"intent:   INT-001", "mode:     architect", "  [x] list\n  [-] edit\n  [ ] ship",
		"question: Ship now?", "  2. Plan first (switches to architect)", "completion (", "  Notes updated.",
		"[debug]  find the bug", "  insert_content                     3         0",
		"  execute_command                    2         1", "  total"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("session show lacks %q:\n%s", want, out)
		}
	}
}

// A mode chosen in one dispatch process holds in the next: architect mode
// edits Markdown in scope and refuses a .go file with TOOL_NOT_ALLOWED naming
// the mode and the pattern.
func TestArchitectModeRefusesGoEdit(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/main.go": "package main\n"})
	a := startDispatch(t, ws, "arch")
	toolsOK(t, a, "select_active_intent", map[string]any{"intent_id": "INT-001"})
	toolsOK(t, a, "switch_mode", map[string]any{"mode_slug": "architect", "reason": "design first"})
	a.in.Close()
	a.cmd.Wait()

	b := startDispatch(t, ws, "arch")
	toolsOK(t, b, "write_to_file", map[string]any{"path": "src/design.md", "content": "# design\n"})
	toolsOK(t, b, "read_file", map[string]any{"path": "src/main.go"})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write_to_file", map[string]any{"path": "src/main.go", "content": "package main\n\nfunc main() {}\n"}},
		{"insert_content", map[string]any{"path": "src/main.go", "line": 0, "content": "// x"}},
		{"search_and_replace", map[string]any{"path": "src/main.go", "search": "main", "replace": "app"}},
		{"apply_diff", map[string]any{"path": "src/main.go", "diff": "<<<<<<< SEARCH\npackage main\n=======\npackage app\n>>>>>>> REPLACE"}},
	} {
		r := toolsCall(b, tc.tool, tc.args)
		if r.code() != "TOOL_NOT_ALLOWED" {
			t.Errorf("%s of a .go file in architect mode: %+v", tc.tool, r)
			continue
		}
		if msg := r.Refusal.Message; !strings.Contains(msg, "Architect mode (architect)") || !strings.Contains(msg, `\.md$`) {
			t.Errorf("%s: message %q does not name the mode and the pattern", tc.tool, msg)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "src", "main.go")); string(got) != "package main\n" {
		t.Errorf("src/main.go = %q", got)
	}
	toolsOK(t, b, "switch_mode", map[string]any{"mode_slug": "code", "reason": "implement"})
	toolsOK(t, b, "write_to_file", map[string]any{"path": "src/main.go", "content": "package main\n\nfunc main() {}\n"})
}

// A missing required parameter is refused with MISSING_PARAMETER naming it.
func TestMissingParametersNamed(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/a.txt": "a\n"})
	s := startDispatch(t, ws, "params")
	toolsOK(t, s, "select_active_intent", map[string]any{"intent_id": "INT-001"})
	toolsOK(t, s, "read_file", map[string]any{"path": "src/a.txt"})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"list_files", map[string]any{"recursive": true}, "path"},
		{"search_files", map[string]any{"path": "src"}, "regex"},
		{"search_files", map[string]any{"regex": "a"}, "path"},
		{"list_code_definition_names", map[string]any{}, "path"},
		{"insert_content", map[string]any{"path": "src/a.txt", "content": "x"}, "line"},
		{"insert_content", map[string]any{"path": "src/a.txt", "line": 1}, "content"},
		{"search_and_replace", map[string]any{"path": "src/a.txt", "replace": "b"}, "search"},
		{"search_and_replace", map[string]any{"path": "src/a.txt", "search": "a"}, "replace"},
		{"ask_followup_question", map[string]any{"follow_up": []string{"yes"}}, "question"},
		{"ask_followup_question", map[string]any{"question": "q"}, "follow_up"},
		{"attempt_completion", map[string]any{}, "result"},
		{"switch_mode", map[string]any{"reason": "r"}, "mode_slug"},
		{"new_task", map[string]any{"message": "m", "todos": ""}, "mode"},
		{"new_task", map[string]any{"mode": "code", "todos": ""}, "message"},
		{"update_todo_list", map[string]any{}, "todos"},
	} {
		r := toolsCall(s, tc.tool, tc.args)
		if r.code() != "MISSING_PARAMETER" || r.Denial.Param != tc.param {
			t.Errorf("%s %v: %+v (denial %+v), want MISSING_PARAMETER naming %s", tc.tool, tc.args, r.result, r.Denial, tc.param)
		}
	}
}

func TestSessionShowUnknown(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	var out strings.Builder
	err := runSessionShow(&sessionShowOptions{workspace: ws, id: "nobody"}, &out)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), `no session "nobody"`) {
		t.Errorf("runSessionShow(unknown) = %v, exit %d", err, exitCode(err))
	}
}
