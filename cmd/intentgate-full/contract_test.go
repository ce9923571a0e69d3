package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The front-door contract: one scenario played through every front door
// (dispatch, the MCP server, Claude Code's command hook as one process per
// event, the daemon over HTTP) gives the same decisions, the same ledger
// records (ids and timestamps aside) and the same files.

const contractIntents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

const (
	contractSession = "contract-session"
	contractAgent   = "claude-code"
	contractModel   = "test/model-1"
)

// outcome is what the agent learned from one step, in door-neutral form.
type outcome struct {
	Allowed   bool
	Code      string // the denial's code when refused
	Violation string // the SCOPE_VIOLATION text the model is given, "" if none
}

// door drives one front door in its own workspace.
type door interface {
	selectIntent(t *testing.T, id string) outcome
	write(t *testing.T, rel, content string) outcome
	command(t *testing.T, command string) outcome
}

// contractStep is one step of the scenario; before runs first, as a person
// would (a setting changed between two calls).
type contractStep struct {
	name   string
	before func(t *testing.T, ws string)
	run    func(t *testing.T, d door) outcome
}

func setOnViolation(mode string) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		if err := os.WriteFile(filepath.Join(ws, ".orchestration", "config.yaml"), []byte("on_violation: "+mode+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var contractSteps = []contractStep{
	{name: "select", run: func(t *testing.T, d door) outcome { return d.selectIntent(t, "INT-001") }},
	{name: "write in scope", run: func(t *testing.T, d door) outcome { return d.write(t, "src/app.txt", "one\ntwo\n") }},
	{name: "command, report", before: setOnViolation("report"), run: func(t *testing.T, d door) outcome {
		return d.command(t, "echo in > src/in1.txt && echo out > out1.txt")
	}},
	{name: "command, revert", before: setOnViolation("revert"), run: func(t *testing.T, d door) outcome {
		return d.command(t, "echo in > src/in2.txt && echo out > out2.txt")
	}},
	{name: "command edits the intents", before: setOnViolation("report"), run: func(t *testing.T, d door) outcome {
		return d.command(t, "echo '# widened by the agent' >> .orchestration/active_intents.yaml")
	}},
}

// The outcomes, written out by hand from the rules: the select and the write
// are allowed; each command runs confined to the intent's scope (src/), so
// its write outside it and its write to the intents fail inside the command,
// and there is nothing left for on_violation to report or restore.
var contractWant = []outcome{
	{Allowed: true},
	{Allowed: true},
	{Allowed: true},
	{Allowed: true},
	{Allowed: true},
}

func TestFrontDoorContract(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs a POSIX shell for the commands")
	}
	requireConfinement(t)
	doors := []struct {
		name string
		open func(t *testing.T, ws string) door
	}{
		{"dispatch", newDispatchDoor},
		{"mcp", newMCPDoor},
		{"hook", func(t *testing.T, ws string) door {
			return &claudeDoor{ws: ws, send: hookProcess(t, "INTENTGATE_NO_DAEMON=1")}
		}},
		{"daemon", func(t *testing.T, ws string) door {
			return &claudeDoor{ws: ws, send: hookHTTP(t, startServe(t, ws, "--socket", "none").url)}
		}},
	}
	type played struct {
		outcomes []outcome
		ledger   []string
		files    map[string]string
	}
	results := map[string]played{}
	for _, dr := range doors {
		t.Run(dr.name, func(t *testing.T) {
			ws := e2eWorkspace(t, contractIntents, map[string]string{"src/keep.txt": "kept\n", "README.md": "readme\n"})
			d := dr.open(t, ws)
			var p played
			for i, st := range contractSteps {
				if st.before != nil {
					st.before(t, ws)
				}
				got := st.run(t, d)
				if got != contractWant[i] {
					t.Errorf("%s: %s = %+v, want %+v", dr.name, st.name, got, contractWant[i])
				}
				p.outcomes = append(p.outcomes, got)
			}
			p.ledger = contractLedger(t, ws)
			p.files = contractFiles(t, ws)
			results[dr.name] = p
		})
	}
	if len(results) != len(doors) {
		t.Fatalf("%d of %d doors played the scenario", len(results), len(doors))
	}
	ref := results["dispatch"]
	// By hand: the files the scenario leaves.
	wantFiles := map[string]string{
		".orchestration/active_intents.yaml": contractIntents,
		".orchestration/config.yaml":         "on_violation: report\n",
		"README.md":                          "readme\n",
		"src/app.txt":                        "one\ntwo\n",
		"src/in1.txt":                        "in\n",
		"src/in2.txt":                        "in\n",
		"src/keep.txt":                       "kept\n",
	}
	if !reflect.DeepEqual(ref.files, wantFiles) {
		t.Errorf("dispatch left files\n%v\nwant\n%v", ref.files, wantFiles)
	}
	// By hand: one record per change, in order; each write the sandbox
	// refused a command is recorded as a refusal before the command's
	// changes.
	wantKinds := []string{
		"src/app.txt write_to_file create allow",
		"out1.txt execute_command denial deny",
		"src/in1.txt execute_command create allow",
		"out2.txt execute_command denial deny",
		"src/in2.txt execute_command create allow",
		".orchestration/active_intents.yaml execute_command denial deny",
	}
	if got := contractKinds(t, ref.ledger); !reflect.DeepEqual(got, wantKinds) {
		t.Errorf("dispatch ledger:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantKinds, "\n"))
	}
	for name, p := range results {
		if name == "dispatch" {
			continue
		}
		if !reflect.DeepEqual(p.outcomes, ref.outcomes) {
			t.Errorf("%s decided %+v, dispatch %+v", name, p.outcomes, ref.outcomes)
		}
		if !reflect.DeepEqual(p.ledger, ref.ledger) {
			t.Errorf("%s ledger differs from dispatch's:\n%s\n---- dispatch:\n%s", name, strings.Join(p.ledger, "\n"), strings.Join(ref.ledger, "\n"))
		}
		if !reflect.DeepEqual(p.files, ref.files) {
			t.Errorf("%s left files %v, dispatch %v", name, p.files, ref.files)
		}
	}
}

// contractLedger is the ledger with what differs by nature between two runs
// taken out: record ids, timestamps, call ids and the chain links (which hash
// the lines that hold them).
func contractLedger(t *testing.T, ws string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		delete(rec, "id")
		delete(rec, "timestamp")
		meta, _ := rec["metadata"].(map[string]any)
		ig, _ := meta["dev.intentgate"].(map[string]any)
		if ig == nil {
			t.Fatalf("ledger line without metadata: %s", line)
		}
		delete(ig, "call_id")
		delete(ig, "prev")
		// A refused write quotes the command's own error, whose wording
		// is the shell's (sh for execute_command, bash under exec).
		if d, _ := ig["denial"].(map[string]any); d != nil {
			if m, _ := d["message"].(string); strings.Contains(m, "the command said: ") {
				d["message"], _, _ = strings.Cut(m, "the command said: ")
			}
		}
		norm, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(norm))
	}
	return out
}

// contractKinds summarizes records as "path tool mutation decision".
func contractKinds(t *testing.T, ledger []string) []string {
	var out []string
	for _, l := range ledger {
		var rec struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
			Metadata struct {
				IG struct {
					Tool, Mutation, Decision, Command, Agent string
				} `json:"dev.intentgate"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || len(rec.Files) != 1 {
			t.Fatalf("record %s: %v", l, err)
		}
		m := rec.Metadata.IG
		if m.Tool == "execute_command" && m.Command == "" {
			t.Errorf("a command's record does not name the command: %s", l)
		}
		if m.Agent != contractAgent {
			t.Errorf("record of agent %q, want %q: %s", m.Agent, contractAgent, l)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", rec.Files[0].Path, m.Tool, m.Mutation, m.Decision))
	}
	return out
}

// contractFiles is every file of the workspace but intentgate's bookkeeping
// and git's.
func contractFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == ".git" || rel == ".orchestration/sessions" || rel == ".orchestration/locks" || rel == ".orchestration/index"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case strings.HasPrefix(rel, ".orchestration/agent_trace.jsonl") || strings.HasPrefix(rel, ".orchestration/intent_map") ||
			strings.HasSuffix(rel, ".lock") || strings.HasPrefix(rel, ".orchestration/."):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violationText is the SCOPE_VIOLATION part of what a command's caller is told.
func violationText(s string) string {
	i := strings.Index(s, "SCOPE_VIOLATION:")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(s[i:])
}

// dispatchDoor runs one `intentgate dispatch` process per call, from a
// subdirectory of the workspace: dispatch must govern the enclosing one.
type dispatchDoor struct {
	ws string
	n  int
}

func newDispatchDoor(t *testing.T, ws string) door {
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &dispatchDoor{ws: ws}
}

func (d *dispatchDoor) call(t *testing.T, tool string, args map[string]any) outcome {
	t.Helper()
	d.n++
	line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(d.n), "session": contractSession, "tool": tool, "args": args})
	cmd := exec.Command(e2eBinary(t), "dispatch", "--agent", contractAgent, "--model", contractModel)
	cmd.Dir = filepath.Join(d.ws, "src")
	cmd.Stdin = bytes.NewReader(append(line, '\n'))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dispatch: %v\n%s", err, stderr.String())
	}
	var res struct {
		OK     bool
		Output string
		Denial *struct {
			Code string `json:"error"`
		}
		Error string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("dispatch answered %q: %v", out, err)
	}
	o := outcome{Allowed: res.OK, Violation: violationText(res.Output)}
	if res.Denial != nil {
		o.Code = res.Denial.Code
	}
	if res.Error != "" {
		t.Fatalf("dispatch %s failed: %s", tool, res.Error)
	}
	return o
}

func (d *dispatchDoor) selectIntent(t *testing.T, id string) outcome {
	return d.call(t, "select_active_intent", map[string]any{"intent_id": id})
}

func (d *dispatchDoor) write(t *testing.T, rel, content string) outcome {
	return d.call(t, "write_to_file", map[string]any{"path": rel, "content": content})
}

func (d *dispatchDoor) command(t *testing.T, command string) outcome {
	return d.call(t, "execute_command", map[string]any{"command": command})
}

// mcpDoor is one `intentgate mcp` process spoken to in raw JSON-RPC, so
// that calls can be sent without waiting for the answers before them.
type mcpDoor struct {
	in      io.WriteCloser
	out     *bufio.Reader
	n       int
	pending map[string]outcome // answers read ahead, by id
	queued  []string           // ids of calls sent and not yet taken
}

func newMCPDoor(t *testing.T, ws string) door {
	cmd := exec.Command(e2eBinary(t), "mcp", "--session", contractSession, "--agent", contractAgent, "--model", contractModel)
	cmd.Dir = ws
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("mcp: %v\n%s", err, stderr.String())
		}
	})
	d := &mcpDoor{in: in, out: bufio.NewReaderSize(out, 1<<16), pending: map[string]outcome{}}
	d.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"contract","version":"1"}}}`)
	d.read(t)
	d.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return d
}

func (d *mcpDoor) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(d.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// read reads one answer and files it under its id.
func (d *mcpDoor) read(t *testing.T) {
	t.Helper()
	line, err := d.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("mcp: %v", err)
	}
	var msg struct {
		ID     json.RawMessage
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		Error *struct{ Message string }
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		t.Fatalf("mcp answered %q: %v", line, err)
	}
	if msg.Error != nil {
		t.Fatalf("mcp error: %s", msg.Error.Message)
	}
	var id string
	json.Unmarshal(msg.ID, &id)
	o := outcome{Allowed: true}
	if msg.Result != nil {
		var text strings.Builder
		for _, c := range msg.Result.Content {
			text.WriteString(c.Text)
		}
		if msg.Result.IsError {
			o.Allowed = false
			var den struct {
				Code string `json:"error"`
			}
			if json.Unmarshal([]byte(text.String()), &den) != nil || den.Code == "" {
				t.Fatalf("mcp tool failed: %s", text.String())
			}
			o.Code = den.Code
		}
		o.Violation = violationText(text.String())
	}
	d.pending[id] = o
}

// call sends a tool call without waiting for its answer.
func (d *mcpDoor) call(t *testing.T, tool string, args map[string]any) {
	d.n++
	id := fmt.Sprintf("call-%d", d.n)
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	d.send(t, string(line))
	d.queued = append(d.queued, id)
}

// next returns the answer to the oldest call not yet taken.
func (d *mcpDoor) next(t *testing.T) outcome {
	t.Helper()
	id := d.queued[0]
	d.queued = d.queued[1:]
	for {
		if o, ok := d.pending[id]; ok {
			delete(d.pending, id)
			return o
		}
		d.read(t)
	}
}

// selectIntent sends the select and, pipelined behind it without waiting,
// the write of the next step: the write must still be judged under the
// intent the select chose.
func (d *mcpDoor) selectIntent(t *testing.T, id string) outcome {
	d.call(t, "select_active_intent", map[string]any{"intent_id": id})
	d.call(t, "write_to_file", map[string]any{"path": "src/app.txt", "content": "one\ntwo\n"})
	return d.next(t)
}

func (d *mcpDoor) write(t *testing.T, rel, content string) outcome {
	if len(d.queued) > 0 { // sent with the select
		return d.next(t)
	}
	d.call(t, "write_to_file", map[string]any{"path": rel, "content": content})
	return d.next(t)
}

func (d *mcpDoor) command(t *testing.T, command string) outcome {
	d.call(t, "execute_command", map[string]any{"command": command})
	return d.next(t)
}

// claudeDoor plays Claude Code: for each tool call a PreToolUse event, the
// tool run by the "agent" itself when allowed, and a PostToolUse event, sent
// through send (a hook process per event, or the daemon's HTTP hook).
type claudeDoor struct {
	ws   string
	send hookChannel
	n    int
}

func (d *claudeDoor) event(t *testing.T, name, tool string, input, response map[string]any, id string) map[string]any {
	t.Helper()
	ev := map[string]any{"session_id": contractSession, "cwd": d.ws, "hook_event_name": name, "model": contractModel,
		"tool_name": tool, "tool_input": input, "tool_use_id": id}
	if response != nil {
		ev["tool_response"] = response
	}
	raw, _ := json.Marshal(ev)
	out := strings.TrimSpace(d.send(raw))
	if out == "" {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s answered %q: %v", name, out, err)
	}
	return m
}

// pre sends a PreToolUse and returns the refusal's code, "" if allowed.
func (d *claudeDoor) pre(t *testing.T, tool string, input map[string]any, id string) string {
	t.Helper()
	m := d.event(t, "PreToolUse", tool, input, nil, id)
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	return denialCode(t, hs)
}

// denialCode is the code of a PreToolUse refusal, "" if the call is allowed.
func denialCode(t *testing.T, hs map[string]any) string {
	t.Helper()
	if hs == nil || hs["permissionDecision"] != "deny" {
		return ""
	}
	var den struct {
		Code string `json:"error"`
	}
	reason, _ := hs["permissionDecisionReason"].(string)
	if err := json.Unmarshal([]byte(reason), &den); err != nil {
		t.Fatalf("denial reason %q: %v", reason, err)
	}
	return den.Code
}

func (d *claudeDoor) nextID() string {
	d.n++
	return fmt.Sprintf("toolu_contract_%d", d.n)
}

func (d *claudeDoor) selectIntent(t *testing.T, intent string) outcome {
	id, tool, input := d.nextID(), "mcp__intentgate__select_active_intent", map[string]any{"intent_id": intent}
	if code := d.pre(t, tool, input, id); code != "" {
		return outcome{Code: code}
	}
	d.event(t, "PostToolUse", tool, input, map[string]any{}, id)
	return outcome{Allowed: true}
}

func (d *claudeDoor) write(t *testing.T, rel, content string) outcome {
	id, abs := d.nextID(), filepath.Join(d.ws, filepath.FromSlash(rel))
	input := map[string]any{"file_path": abs, "content": content}
	if code := d.pre(t, "Write", input, id); code != "" {
		return outcome{Code: code}
	}
	if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	d.event(t, "PostToolUse", "Write", input, map[string]any{"type": "create", "filePath": abs, "content": content, "originalFile": nil}, id)
	return outcome{Allowed: true}
}

func (d *claudeDoor) command(t *testing.T, command string) outcome {
	id, input := d.nextID(), map[string]any{"command": command}
	m := d.event(t, "PreToolUse", "Bash", input, nil, id)
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	if code := denialCode(t, hs); code != "" {
		return outcome{Code: code}
	}
	// Claude Code runs the command the hook gave back: the original under
	// intentgate exec.
	upd, _ := hs["updatedInput"].(map[string]any)
	wrapped, _ := upd["command"].(string)
	if !strings.Contains(wrapped, " exec --session ") {
		t.Fatalf("PreToolUse Bash answered %v, want the command under intentgate exec", m)
	}
	sh := exec.Command("sh", "-c", wrapped)
	sh.Dir = d.ws
	out, err := sh.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v\n%s", wrapped, err, out)
	}
	// The post event names the command as the agent wrote it, as the other
	// doors record it.
	m = d.event(t, "PostToolUse", "Bash", input, map[string]any{"stdout": string(out), "stderr": "", "interrupted": false}, id)
	o := outcome{Allowed: true}
	if m["decision"] == "block" {
		reason, _ := m["reason"].(string)
		o.Violation = violationText(reason)
	}
	return o
}

// dispatch governs the workspace enclosing the directory it runs in, and
// refuses to start, creating nothing, where there is none.
func TestDispatchFindsWorkspace(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, contractIntents, map[string]string{"src/deep/er/x.txt": "x\n"})
	line := `{"id":"1","session":"s","tool":"select_active_intent","args":{"intent_id":"INT-001"}}` + "\n" +
		`{"id":"2","session":"s","tool":"write_to_file","args":{"path":"src/new.txt","content":"n\n"}}` + "\n"
	cmd := exec.Command(e2eBinary(t), "dispatch")
	cmd.Dir = filepath.Join(ws, "src", "deep", "er")
	cmd.Stdin = strings.NewReader(line)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), `"ok":true`) != 2 {
		t.Fatalf("dispatch from a subdirectory: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "src", "new.txt")); err != nil || string(b) != "n\n" {
		t.Errorf("src/new.txt = %q, %v; want the write to land in the enclosing workspace", b, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "src", "deep", "er", ".orchestration")); err == nil {
		t.Error("dispatch created .orchestration in the subdirectory")
	}

	bare := t.TempDir()
	cmd = exec.Command(e2eBinary(t), "dispatch")
	cmd.Dir = bare
	cmd.Stdin = strings.NewReader(line)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "intentgate init") {
		t.Errorf("dispatch outside any workspace: %v\n%s\nwant a non-zero exit naming intentgate init", err, out)
	}
	if _, err := os.Lstat(filepath.Join(bare, ".orchestration")); err == nil {
		t.Error("dispatch created .orchestration outside any workspace")
	}
}
