package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

const agentIntents = `active_intents:
  - id: INT-001
    name: Express server
    status: IN_PROGRESS
    owned_scope: ["app/**"]
`

// ownRun is one finished `intentgate run` process.
type ownRun struct {
	lines  []agent.Message // the stream-json lines, partial updates included
	final  agent.Result    // the summary stream-json writes to stderr
	code   int
	stdout string
	stderr string
}

// runBin runs the built binary against the fake model server with answers
// on stdin, and decodes its stream-json output.
func runBin(t *testing.T, ws, url, prov, stdin string, args ...string) ownRun {
	t.Helper()
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "ANTHROPIC_") && !strings.HasPrefix(e, "OPENAI_") {
			env = append(env, e)
		}
	}
	if prov == "openai" {
		env = append(env, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+url+"/v1")
	} else {
		env = append(env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	}
	all := append([]string{"run", "-w", ws, "--provider", prov, "--output-format", "stream-json", "--retry-delay", "1ms"}, args...)
	cmd := exec.Command(e2eBinary(t), all...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := ownRun{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r.lines = decodeLines(t, out.Bytes())
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, `{"`) {
			if err := json.Unmarshal([]byte(l), &r.final); err != nil {
				t.Fatalf("summary line %q: %v", l, err)
			}
		}
	}
	return r
}

func decodeLines(t *testing.T, b []byte) []agent.Message {
	t.Helper()
	var out []agent.Message
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if bytes.HasPrefix(l, []byte(`{"text":`)) && bytes.HasSuffix(bytes.TrimSpace(l), []byte(`"type":"commandExecutionStatus"}`)) {
			continue // a running command's status, not a ClineMessage (run_live_e2e_test.go checks them)
		}
		var m agent.Message
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("stdout line is not a ClineMessage: %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// collapse applies the stream as a viewer does: a line with the ts of an
// earlier message replaces it.
func collapse(lines []agent.Message) []agent.Message {
	var msgs []agent.Message
	for _, m := range lines {
		replaced := false
		for i := range msgs {
			if msgs[i].TS == m.TS {
				msgs[i] = m
				replaced = true
			}
		}
		if !replaced {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// expectedState is the state rule written out from the issue, independent of
// DetectAgentState: the state the last line implies.
func expectedState(msgs []agent.Message) agent.State {
	last := msgs[len(msgs)-1]
	if last.IsPartial() {
		return agent.StateStreaming
	}
	if last.Type == agent.TypeAsk {
		switch last.Ask {
		case "resume_task":
			return agent.StateResumable
		case "completion_result", "api_req_failed", "resume_completed_task", "mistake_limit_reached", "auto_approval_max_req_reached":
			return agent.StateIdle
		case "command_output":
			return agent.StateRunning
		}
		return agent.StateWaitingForInput
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Say == "api_req_started" {
			if !strings.Contains(msgs[i].Text, `"cost":`) && !strings.Contains(msgs[i].Text, `"cancelReason"`) {
				return agent.StateStreaming
			}
			break
		}
	}
	return agent.StateRunning
}

// checkStates replays the stream and checks the derived state after every
// line.
func checkStates(t *testing.T, lines []agent.Message) {
	t.Helper()
	var msgs []agent.Message
	for i, m := range lines {
		msgs = collapse(append(msgs, m))
		got := agent.DetectAgentState(msgs).State
		if want := expectedState(msgs); got != want {
			t.Errorf("after line %d (%s%s %q): DetectAgentState = %s, want %s", i, m.Ask, m.Say, short(m.Text, 60), got, want)
		}
	}
}

// kinds lists the final messages as "say:x" / "ask:y".
func kinds(msgs []agent.Message) []string {
	var out []string
	for _, m := range collapse(msgs) {
		if m.Type == agent.TypeAsk {
			out = append(out, "ask:"+string(m.Ask))
		} else {
			out = append(out, "say:"+string(m.Say))
		}
	}
	return out
}

func yes() string { return `{"type":"askResponse","askResponse":"yesButtonClicked"}` + "\n" }
func no() string  { return `{"type":"askResponse","askResponse":"noButtonClicked"}` + "\n" }
func reply(kind, text string) string {
	b, _ := json.Marshal(agent.Answer{Type: "askResponse", Response: agent.Response(kind), Text: text})
	return string(b) + "\n"
}

func call(id, name string, args any) fakemodel.Call {
	b, _ := json.Marshal(args)
	return fakemodel.Call{ID: id, Name: name, Args: string(b)}
}

func turn(text string, u fakemodel.Usage, calls ...fakemodel.Call) fakemodel.Turn {
	return fakemodel.Turn{Text: text, Calls: calls, Usage: u}
}

const packageJSON = "{\n  \"name\": \"app\",\n  \"dependencies\": { \"express\": \"^4.19.2\" }\n}\n"
const serverJS = "const express = require('express')\nconst app = express()\napp.get('/', (req, res) => res.send('hello'))\napp.listen(3000)\n"
const serverJS2 = "const express = require('express')\nconst app = express()\napp.get('/', (req, res) => res.send('hello'))\napp.listen(process.env.PORT || 8080)\n"

// referenceTurns is the reference conversation: list files, choose the
// intent, write package.json and server.js, run a command, attempt
// completion, get feedback, edit, attempt completion again.
func referenceTurns() []fakemodel.Turn {
	u1 := fakemodel.Usage{Input: 1200, Output: 40, CacheWrite: 9000}
	u := func(in, out int) fakemodel.Usage { return fakemodel.Usage{Input: in, Output: out, CacheRead: 9000} }
	return []fakemodel.Turn{
		turn("I'll look at the workspace first.", u1, call("toolu_01", "list_files", map[string]any{"path": ".", "recursive": false})),
		turn("", u(300, 20), call("toolu_02", "select_active_intent", map[string]any{"intent_id": "INT-001"})),
		turn("Writing package.json.", u(400, 60), call("toolu_03", "write_to_file", map[string]any{"path": "app/package.json", "content": packageJSON})),
		turn("", u(500, 90), call("toolu_04", "write_to_file", map[string]any{"path": "app/server.js", "content": serverJS})),
		turn("", u(600, 15), call("toolu_05", "execute_command", map[string]any{"command": "ls app"})),
		turn("", u(700, 30), call("toolu_06", "attempt_completion", map[string]any{"result": "An Express server in app/ listening on port 3000."})),
		turn("I'll read the port from the environment.", u(800, 95), call("toolu_07", "write_to_file", map[string]any{"path": "app/server.js", "content": serverJS2})),
		turn("", u(900, 25), call("toolu_08", "attempt_completion", map[string]any{"result": "An Express server in app/ listening on $PORT or 8080."})),
	}
}

func TestRunReferenceConversationAnthropic(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, map[string]string{"README.md": "# demo\n"})
	fake := fakemodel.New(referenceTurns()...)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	stdin := yes() + yes() + yes() + reply("messageResponse", "Use the PORT environment variable, default 8080.") + yes() + yes()
	r := runBin(t, ws, srv.URL, "anthropic", stdin, "--model", "claude-sonnet-4-5", "--auto-approve", "read", "Create a small Express server in app/")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// The message stream.
	want := []string{"say:text",
		"say:api_req_started", "say:text",
		"say:api_req_started",
		"say:api_req_started", "say:text", "ask:tool",
		"say:api_req_started", "ask:tool",
		"say:api_req_started", "ask:command", "say:command_output",
		"say:api_req_started", "say:completion_result", "ask:completion_result", "say:user_feedback",
		"say:api_req_started", "say:text", "ask:tool",
		"say:api_req_started", "say:completion_result", "ask:completion_result"}
	if got := kinds(r.lines); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("message kinds:\n got %v\nwant %v", got, want)
	}
	partials := 0
	for _, m := range r.lines {
		if m.IsPartial() {
			partials++
		}
	}
	if partials == 0 {
		t.Error("no partial text updates were streamed")
	}
	checkStates(t, r.lines)
	final := collapse(r.lines)
	if st := agent.DetectAgentState(final); st.State != agent.StateIdle || st.Ask != agent.AskCompletionResult {
		t.Errorf("final state = %+v, want IDLE on completion_result", st)
	}
	var ask agent.SayTool
	for _, m := range final {
		if m.Ask == agent.AskTool {
			if err := json.Unmarshal([]byte(m.Text), &ask); err != nil {
				t.Fatalf("tool ask text is not a ClineSayTool: %v", err)
			}
			break
		}
	}
	if ask.Tool != "newFileCreated" || ask.Path != "app/package.json" || ask.Content != packageJSON {
		t.Errorf("first tool ask = %+v", ask)
	}
	for _, m := range final {
		if m.Say == agent.SayCommandOutput && (!strings.Contains(m.Text, "package.json") || !strings.Contains(m.Text, "server.js")) {
			t.Errorf("command output %q does not list the files", m.Text)
		}
	}

	// The files.
	for p, body := range map[string]string{"app/package.json": packageJSON, "app/server.js": serverJS2} {
		b, err := os.ReadFile(filepath.Join(ws, p))
		if err != nil || string(b) != body {
			t.Errorf("%s = %q, %v; want %q", p, b, err, body)
		}
	}

	// The requests: 8 of them, each with the full history.
	reqs := fake.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 8", len(reqs))
	}
	ids := []string{"toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05", "toolu_06", "toolu_07"}
	for i, rq := range reqs {
		checkAnthropicRequest(t, i, rq, ids)
	}

	// Usage and cost: the sum of the scripted usage, priced by hand from
	// prices.json's claude-sonnet-4-5 entry (3, 15, 3.75, 0.30 $/Mtok).
	var in, out, cw, cr int
	for _, tr := range referenceTurns() {
		in, out, cw, cr = in+tr.Usage.Input, out+tr.Usage.Output, cw+tr.Usage.CacheWrite, cr+tr.Usage.CacheRead
	}
	tu := r.final.TokenUsage
	if tu.TotalTokensIn != in || tu.TotalTokensOut != out || tu.TotalCacheWrites != cw || tu.TotalCacheReads != cr {
		t.Errorf("token usage = %+v, want in %d out %d cw %d cr %d", tu, in, out, cw, cr)
	}
	cost := (float64(in)*3 + float64(out)*15 + float64(cw)*3.75 + float64(cr)*0.30) / 1e6
	if math.Abs(tu.TotalCost-cost) > 1e-9 {
		t.Errorf("total cost = %v, want %v", tu.TotalCost, cost)
	}
	last := fakemodel.Usage{Input: 900, Output: 25, CacheRead: 9000}
	if tu.ContextTokens != last.Input+last.Output+last.CacheRead {
		t.Errorf("context tokens = %d, want %d", tu.ContextTokens, last.Input+last.Output+last.CacheRead)
	}
	if c := r.final.ToolUsage["write_to_file"]; c == nil || c.Attempts != 3 || c.Failures != 0 {
		t.Errorf("write_to_file usage = %+v, want 3 attempts", c)
	}

	// The ledger: every write is recorded under the task's id as session,
	// with the intent, and its ranges hash to the file's lines.
	checkLedger(t, ws, r.final.TaskID, map[string]string{"app/package.json": packageJSON, "app/server.js": serverJS2})

	// The task is stored and listed.
	out2, err := exec.Command(e2eBinary(t), "tasks", "list", "-w", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out2), r.final.TaskID) || !strings.Contains(string(out2), "IDLE (completion_result)") {
		t.Errorf("tasks list: %v\n%s", err, out2)
	}
	out3, err := exec.Command(e2eBinary(t), "tasks", "show", r.final.TaskID, "-w", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out3), "ask completion_result") {
		t.Errorf("tasks show: %v\n%s", err, out3)
	}
	conformance(t, r.lines, &r.final)
}

func checkAnthropicRequest(t *testing.T, i int, rq fakemodel.Request, ids []string) {
	t.Helper()
	if rq.APIKey != "test-key" || !strings.HasSuffix(rq.Path, "/v1/messages") {
		t.Errorf("request %d: path %s key %q", i, rq.Path, rq.APIKey)
	}
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		System []struct {
			Type         string `json:"type"`
			Text         string `json:"text"`
			CacheControl *struct {
				Type string `json:"type"`
			} `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice struct {
			Type string `json:"type"`
		} `json:"tool_choice"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type         string          `json:"type"`
				Text         string          `json:"text"`
				ID           string          `json:"id"`
				ToolUseID    string          `json:"tool_use_id"`
				Content      json.RawMessage `json:"content"`
				CacheControl *struct {
					Type string `json:"type"`
				} `json:"cache_control"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(rq.Body, &body); err != nil {
		t.Fatalf("request %d: %v", i, err)
	}
	if body.Model != "claude-sonnet-4-5" || !body.Stream {
		t.Errorf("request %d: model %q stream %v", i, body.Model, body.Stream)
	}
	if len(body.System) != 1 || body.System[0].CacheControl == nil || body.System[0].CacheControl.Type != "ephemeral" ||
		!strings.Contains(body.System[0].Text, "INT-001") {
		t.Errorf("request %d: system block without ephemeral cache control or without the intents", i)
	}
	names := map[string]bool{}
	for _, tl := range body.Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"write_to_file", "execute_command", "attempt_completion", "select_active_intent", "read_file"} {
		if !names[n] {
			t.Errorf("request %d: tool %s missing", i, n)
		}
	}
	if body.ToolChoice.Type != "auto" {
		t.Errorf("request %d: tool_choice %q", i, body.ToolChoice.Type)
	}
	// History grows by exactly one assistant and one user message a turn.
	if len(body.Messages) != 2*i+1 {
		t.Fatalf("request %d: %d messages, want %d", i, len(body.Messages), 2*i+1)
	}
	first := body.Messages[0]
	if first.Role != "user" || !strings.HasPrefix(first.Content[0].Text, "<task>\nCreate a small Express server in app/\n</task>") {
		t.Errorf("request %d: first message %+v", i, first)
	}
	if env := first.Content[len(first.Content)-1].Text; !strings.Contains(env, "<environment_details>") || !strings.Contains(env, "README.md") ||
		!strings.Contains(env, "# Current Mode\n<slug>code</slug>") {
		t.Errorf("request %d: first message lacks the environment details with the file listing: %q", i, env)
	}
	lastMsg := body.Messages[len(body.Messages)-1]
	if lastMsg.Role != "user" {
		t.Errorf("request %d: last message is %s", i, lastMsg.Role)
	}
	if lb := lastMsg.Content[len(lastMsg.Content)-1]; lb.CacheControl == nil || lb.CacheControl.Type != "ephemeral" ||
		!strings.HasPrefix(lb.Text, "<environment_details>") {
		t.Errorf("request %d: last user block is not the cached environment details", i)
	}
	if i > 0 {
		if asst := body.Messages[2*i-1]; asst.Role != "assistant" || asst.Content[len(asst.Content)-1].ID != ids[i-1] {
			t.Errorf("request %d: previous assistant message does not end with tool_use %s", i, ids[i-1])
		}
		if lastMsg.Content[0].Type != "tool_result" || lastMsg.Content[0].ToolUseID != ids[i-1] {
			t.Errorf("request %d: user message does not start with the tool_result for %s: %+v", i, ids[i-1], lastMsg.Content[0])
		}
	}
}

func checkLedger(t *testing.T, ws, session string, files map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	latest := map[string]ledgerLine{}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec ledgerLine
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatalf("ledger line %q: %v", l, err)
		}
		if rec.Metadata.IG.Tool != "write_to_file" {
			continue
		}
		if rec.Metadata.IG.Session != session || rec.Metadata.IG.Intent != "INT-001" {
			t.Errorf("ledger record for %s: session %q intent %q, want %q INT-001", rec.Files[0].Path, rec.Metadata.IG.Session, rec.Metadata.IG.Intent, session)
		}
		latest[rec.Files[0].Path] = rec
	}
	for p, body := range files {
		rec, ok := latest[p]
		if !ok {
			t.Errorf("no ledger record for %s", p)
			continue
		}
		for _, c := range rec.Files[0].Conversations {
			for _, rg := range c.Ranges {
				if got := rangeHash([]byte(body), rg.Start, rg.End); got != rg.Hash {
					t.Errorf("%s lines %d-%d: hash %s, recomputed %s", p, rg.Start, rg.End, rg.Hash, got)
				}
			}
		}
	}
}

// conformance validates the emitted messages and usage with the schemas of
// @roo-code/types 1.63.0, run by node in agent/testdata/conformance.
func conformance(t *testing.T, lines []agent.Message, res *agent.Result) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "agent", "testdata", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@roo-code", "types"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the conformance check needs node and `npm ci` in %s: %v", dir, err)
		}
		t.Skipf("conformance check skipped (run npm ci in agent/testdata/conformance): %v", err)
	}
	cats := map[string]map[string]bool{}
	for _, a := range agent.ClineAsks {
		cats[string(a)] = map[string]bool{"idle": agent.IsIdleAsk(a), "interactive": agent.IsInteractiveAsk(a), "resumable": agent.IsResumableAsk(a)}
	}
	in := map[string]any{
		"messages": lines,
		"lists": map[string]any{"clineAsks": agent.ClineAsks, "clineSays": agent.ClineSays, "idleAsks": agent.IdleAsks,
			"interactiveAsks": agent.InteractiveAsks, "resumableAsks": agent.ResumableAsks, "nonBlockingAsks": agent.NonBlockingAsks},
		"categories":     cats,
		"referenceTools": agent.ReferenceTools(),
	}
	if res != nil {
		in["tokenUsage"], in["toolUsage"] = res.TokenUsage, res.ToolUsage
	}
	b, _ := json.Marshal(in)
	f := filepath.Join(t.TempDir(), "conformance.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "check.mjs"), f).CombinedOutput()
	if err != nil {
		t.Errorf("conformance with @roo-code/types 1.63.0 failed: %v\n%s", err, out)
	} else {
		t.Log(strings.TrimSpace(string(out)))
	}
}

var _ = fmt.Sprintf
