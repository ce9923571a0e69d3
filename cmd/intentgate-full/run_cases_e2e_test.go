package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

var small = fakemodel.Usage{Input: 100, Output: 10}

func turnSelectIntent(id string) fakemodel.Turn {
	return turn("", small, call(id, "select_active_intent", map[string]any{"intent_id": "INT-001"}))
}

func complete(id, result string) fakemodel.Turn {
	return turn("", small, call(id, "attempt_completion", map[string]any{"result": result}))
}

func write(id, path, content string) fakemodel.Call {
	return call(id, "write_to_file", map[string]any{"path": path, "content": content})
}

// lastUser returns the blocks of the last user message of request i.
func lastUser(t *testing.T, rq fakemodel.Request) []map[string]any {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(rq.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages[len(body.Messages)-1].Content
}

func resultText(b map[string]any) string {
	switch c := b["content"].(type) {
	case string:
		return c
	case []any:
		var s string
		for _, x := range c {
			if m, ok := x.(map[string]any); ok {
				s += m["text"].(string)
			}
		}
		return s
	}
	return ""
}

func startFake(t *testing.T, turns ...fakemodel.Turn) (*fakemodel.Server, string) {
	fake := fakemodel.New(turns...)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

func mustExit(t *testing.T, r ownRun, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func TestRunGovernanceRefusalReachesTheModel(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, write("t2", "docs/notes.md", "out of scope\n")),
		turn("", small, write("t3", "app/ok.txt", "in scope\n")),
		complete("t4", "done"))
	r := runBin(t, ws, url, "anthropic", yes()+yes(), "--auto-approve", "read", "write a note")
	mustExit(t, r, 0)
	final := collapse(r.lines)
	var refusal string
	asks := 0
	for _, m := range final {
		if m.Say == agent.SayError {
			refusal = m.Text
		}
		if m.Ask == agent.AskTool {
			asks++
			if strings.Contains(m.Text, "docs/notes.md") {
				t.Error("a refused call was put to the person")
			}
		}
	}
	var d struct {
		Error string `json:"error"`
		Path  string `json:"path"`
	}
	if err := json.Unmarshal([]byte(refusal), &d); err != nil || d.Error != "SCOPE_VIOLATION" {
		t.Errorf("error say = %q, want the SCOPE_VIOLATION denial JSON", refusal)
	}
	if asks != 1 {
		t.Errorf("%d tool asks, want 1 (only the allowed write)", asks)
	}
	res := lastUser(t, fake.Requests()[2])[0]
	if res["tool_use_id"] != "t2" || res["is_error"] != true || !strings.Contains(resultText(res), `"error":"SCOPE_VIOLATION"`) {
		t.Errorf("the model got %v, want the denial as an error tool_result for t2", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "docs", "notes.md")); err == nil {
		t.Error("the refused file was written")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "app", "ok.txt")); string(b) != "in scope\n" {
		t.Errorf("app/ok.txt = %q", b)
	}
	checkStates(t, r.lines)
	conformance(t, r.lines, &r.final)
}

func TestRunApproveRejectFeedback(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		// Two calls in one message: rejecting the first skips the second.
		turn("", small, write("t2", "app/a.txt", "a\n"), write("t3", "app/d.txt", "d\n")),
		turn("", small, write("t4", "app/b.txt", "b\n")),
		turn("", small, write("t5", "app/c.txt", "c\n")),
		complete("t6", "done"))
	stdin := no() + reply("noButtonClicked", "not b, please") + reply("yesButtonClicked", "fine, c is good") + yes()
	r := runBin(t, ws, url, "anthropic", stdin, "--auto-approve", "read", "write files")
	mustExit(t, r, 0)
	reqs := fake.Requests()
	u := lastUser(t, reqs[2])
	if resultText(u[0]) != "The user denied this operation." || u[0]["tool_use_id"] != "t2" {
		t.Errorf("after reject: %v", u[0])
	}
	if u[1]["tool_use_id"] != "t3" || !strings.Contains(resultText(u[1]), "Skipping tool [write_to_file] due to user rejecting a previous tool.") {
		t.Errorf("second call of the rejected message: %v", u[1])
	}
	if got := resultText(lastUser(t, reqs[3])[0]); !strings.Contains(got, "denied") || !strings.Contains(got, "<feedback>\nnot b, please\n</feedback>") {
		t.Errorf("after reject with feedback: %q", got)
	}
	if got := resultText(lastUser(t, reqs[4])[0]); !strings.Contains(got, "approved this operation") || !strings.Contains(got, "fine, c is good") {
		t.Errorf("after approve with feedback: %q", got)
	}
	for p, want := range map[string]bool{"app/a.txt": false, "app/d.txt": false, "app/b.txt": false, "app/c.txt": true} {
		if _, err := os.Stat(filepath.Join(ws, p)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", p, err == nil, want)
		}
	}
	feedback := 0
	for _, m := range collapse(r.lines) {
		if m.Say == agent.SayUserFeedback {
			feedback++
		}
	}
	if feedback != 2 {
		t.Errorf("%d user_feedback says, want 2", feedback)
	}
	conformance(t, r.lines, &r.final)
}

func TestRunMistakeLimit(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t0"),
		turn("I think I am done.", small), // no tool call
		turn("", small, fakemodel.Call{ID: "t2", Name: "write_to_file", Args: `{"path": "app/x`}), // malformed
		turn("", small, call("t3", "write_to_file", map[string]any{"path": "app/x.txt"})),         // missing content
		complete("t4", "done"))
	stdin := reply("messageResponse", "Call attempt_completion now.") + yes()
	r := runBin(t, ws, url, "anthropic", stdin, "-y", "do something")
	mustExit(t, r, 0)
	got := kinds(r.lines)
	i := strings.Index(strings.Join(got, " "), "ask:mistake_limit_reached")
	if i < 0 {
		t.Fatalf("no mistake_limit_reached ask: %v", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	if txt, _ := lastUser(t, reqs[2])[0]["text"].(string); !strings.Contains(txt, "You did not use a tool") {
		t.Errorf("no-tool correction = %q", txt)
	}
	u := lastUser(t, reqs[4])
	joined, _ := json.Marshal(u)
	if !strings.Contains(string(joined), "MISSING_PARAMETER") || !strings.Contains(string(joined), "Call attempt_completion now.") {
		t.Errorf("after the limit the model gets the error and the guidance: %s", joined)
	}
	checkStates(t, r.lines)
	conformance(t, r.lines, &r.final)
}

func TestRunRetriesThenSucceeds(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		fakemodel.Turn{Status: 429}, fakemodel.Turn{Status: 500},
		complete("t1", "nothing to do"))
	r := runBin(t, ws, url, "anthropic", yes(), "-y", "nothing")
	mustExit(t, r, 0)
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	delayed := 0
	failed := 0
	for _, m := range collapse(r.lines) {
		if m.Say == agent.SayAPIReqRetryDelayed {
			delayed++
		}
		if m.Say == agent.SayAPIReqStarted && strings.Contains(m.Text, `"cancelReason":"streaming_failed"`) {
			failed++
		}
	}
	if delayed != 2 || failed != 2 {
		t.Errorf("%d api_req_retry_delayed, %d failed requests; want 2 and 2", delayed, failed)
	}
	checkStates(t, r.lines)
	conformance(t, r.lines, &r.final)
}

func TestRunAPIFailureAsks(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	_, url := startFake(t, fakemodel.Turn{Status: 400})
	r := runBin(t, ws, url, "anthropic", no(), "-y", "nothing")
	mustExit(t, r, 1)
	if st := agent.DetectAgentState(collapse(r.lines)); st.State != agent.StateIdle || st.Ask != agent.AskAPIReqFailed {
		t.Errorf("state %+v, want IDLE on api_req_failed", st)
	}
	conformance(t, r.lines, nil)
}

func TestRunFollowupAnsweredOnStdin(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turn("", small, call("t1", "ask_followup_question", map[string]any{"question": "Which port?",
			"follow_up": []map[string]any{{"text": "3000"}, {"text": "8080", "mode": "code"}}})),
		complete("t2", "port chosen"))
	r := runBin(t, ws, url, "anthropic", reply("messageResponse", "9090")+yes(), "pick a port")
	mustExit(t, r, 0)
	var fu agent.FollowupData
	for _, m := range collapse(r.lines) {
		if m.Ask == agent.AskFollowup {
			if err := json.Unmarshal([]byte(m.Text), &fu); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fu.Question != "Which port?" || len(fu.Suggest) != 2 || fu.Suggest[1].Answer != "8080" || fu.Suggest[1].Mode != "code" {
		t.Errorf("followup = %+v", fu)
	}
	if got := resultText(lastUser(t, fake.Requests()[1])[0]); got != "<answer>\n9090\n</answer>" {
		t.Errorf("the model got %q", got)
	}
	conformance(t, r.lines, &r.final)
}

func TestRunSubtaskInAnotherMode(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, map[string]string{"app/main.go": "package main\n"})
	fake, url := startFake(t,
		turn("", small, call("p1", "new_task", map[string]any{"mode": "ask", "message": "Explain app/main.go", "todos": []string{}})),
		complete("c1", "It is an empty main package."),
		complete("p2", "explained"))
	r := runBin(t, ws, url, "anthropic", yes()+yes(), "--auto-approve", "read", "explain the app")
	mustExit(t, r, 0)
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var child struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &child); err != nil {
		t.Fatal(err)
	}
	for _, tl := range child.Tools {
		if tl.Name == "write_to_file" {
			t.Error("the ask-mode subtask was offered write_to_file")
		}
	}
	if len(child.Messages) != 1 || !strings.Contains(child.Messages[0].Content[0]["text"].(string), "Explain app/main.go") {
		t.Errorf("the subtask does not start with its own message: %+v", child.Messages)
	}
	if got := resultText(lastUser(t, reqs[2])[0]); !strings.Contains(got, "It is an empty main package.") {
		t.Errorf("the parent got %q", got)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "tasks"))
	if len(entries) != 2 {
		t.Errorf("%d stored tasks, want parent and child", len(entries))
	}
	var sawResult bool
	for _, m := range collapse(r.lines) {
		if m.Say == agent.SaySubtaskResult && m.Text == "It is an empty main package." {
			sawResult = true
		}
	}
	if !sawResult {
		t.Error("no subtask_result say")
	}
	conformance(t, r.lines, &r.final)
}

func TestRunKilledThenResumed(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, write("t2", "app/a.txt", "a\n")),
		// After the resume:
		turn("", small, write("t3", "app/a.txt", "a\n")),
		complete("t4", "done"))
	env := append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--output-format", "stream-json", "--auto-approve", "read", "write a")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var m agent.Message
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Ask == agent.AskTool {
			break
		}
	}
	// kill -9 while the task waits for approval.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	stdin.Close()
	go io.Copy(io.Discard, stdout)

	entries, err := os.ReadDir(filepath.Join(ws, ".orchestration", "tasks"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("stored tasks: %v %v", entries, err)
	}
	id := entries[0].Name()
	out, _ := exec.Command(e2eBinary(t), "tasks", "list", "-w", ws).CombinedOutput()
	if !strings.Contains(string(out), "WAITING_FOR_INPUT (tool)") {
		t.Errorf("tasks list after the kill:\n%s", out)
	}
	r := runBin(t, ws, url, "anthropic", yes()+yes()+yes(), "--auto-approve", "read", "--resume", id)
	mustExit(t, r, 0)
	if r.final.TaskID != id {
		t.Errorf("resumed task id %q, want %q", r.final.TaskID, id)
	}
	if got := kinds(r.lines); len(got) == 0 || got[0] != "ask:resume_task" {
		t.Errorf("the resumed run starts with %v, want ask:resume_task", got)
	}
	reqs := fake.Requests()
	u := lastUser(t, reqs[2])
	if u[0]["tool_use_id"] != "t2" || !strings.Contains(resultText(u[0]), "interrupted") {
		t.Errorf("the interrupted call gets no result: %v", u[0])
	}
	if txt, _ := u[1]["text"].(string); !strings.HasPrefix(txt, "[TASK RESUMPTION]") {
		t.Errorf("no resumption note: %v", u[1])
	}
	checkLedger(t, ws, id, map[string]string{"app/a.txt": "a\n"})
	conformance(t, r.lines, &r.final)
}

func TestRunOpenAIProvider(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	u := fakemodel.Usage{Input: 500, Output: 20, CacheRead: 1000}
	fake, url := startFake(t,
		turn("Choosing the intent.", u, call("call_1", "select_active_intent", map[string]any{"intent_id": "INT-001"})),
		turn("", u, write("call_2", "app/package.json", packageJSON)),
		turn("", u, call("call_3", "attempt_completion", map[string]any{"result": "done"})))
	r := runBin(t, ws, url, "openai", yes()+yes(), "--model", "gpt-4.1", "--auto-approve", "read", "write package.json")
	mustExit(t, r, 0)
	reqs := fake.Requests()
	if len(reqs) != 3 || !strings.HasSuffix(reqs[0].Path, "/chat/completions") {
		t.Fatalf("requests: %d, path %s", len(reqs), reqs[0].Path)
	}
	var body struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[2].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-4.1" || !body.Stream || !body.StreamOptions.IncludeUsage || len(body.Tools) == 0 || body.Tools[0].Type != "function" {
		t.Errorf("request shape: model %q stream %v usage %v tools %d", body.Model, body.Stream, body.StreamOptions.IncludeUsage, len(body.Tools))
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user,assistant,tool,user" {
		t.Errorf("roles = %v", roles)
	}
	if m := body.Messages[5]; len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "call_2" || m.ToolCalls[0].Function.Name != "write_to_file" {
		t.Errorf("assistant tool call = %+v", m.ToolCalls)
	}
	if body.Messages[6].ToolCallID != "call_2" {
		t.Errorf("tool message answers %q, want call_2", body.Messages[6].ToolCallID)
	}
	tu := r.final.TokenUsage
	if tu.TotalTokensIn != 1500 || tu.TotalTokensOut != 60 || tu.TotalCacheReads != 3000 {
		t.Errorf("usage = %+v", tu)
	}
	// gpt-4.1 in prices.json: 2 in, 8 out, 0.50 cache read $/Mtok.
	if want := (1500*2.0 + 60*8.0 + 3000*0.5) / 1e6; tu.TotalCost < want-1e-9 || tu.TotalCost > want+1e-9 {
		t.Errorf("cost = %v, want %v", tu.TotalCost, want)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "app", "package.json")); string(b) != packageJSON {
		t.Errorf("app/package.json = %q", b)
	}
	for _, m := range r.lines {
		if m.Say == agent.SayAPIReqStarted && m.APIProtocol != "openai" {
			t.Errorf("apiProtocol = %q", m.APIProtocol)
		}
	}
	conformance(t, r.lines, &r.final)
}

func TestRunUsageErrors(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "ANTHROPIC_") && !strings.HasPrefix(e, "OPENAI_") {
			env = append(env, e)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-w", ws, "x"}, 2, "ANTHROPIC_API_KEY is not set"},
		{[]string{"run", "-w", ws, "--provider", "openai", "x"}, 2, "OPENAI_API_KEY is not set"},
		{[]string{"run", "-w", ws}, 2, "needs the task"},
		{[]string{"run", "-w", ws, "--output-format", "xml", "x"}, 2, "--output-format"},
		{[]string{"run", "-w", ws, "--auto-approve", "everything", "x"}, 2, "unknown auto-approval group"},
		{[]string{"run", "-w", ws, "--resume", "../../etc"}, 2, "task id"},
	} {
		cmd := exec.Command(e2eBinary(t), tc.args...)
		cmd.Env = append(env, "ANTHROPIC_API_KEY_UNUSED=1")
		if strings.Contains(tc.want, "task id") {
			cmd.Env = append(cmd.Env, "ANTHROPIC_API_KEY=k")
		}
		out, err := cmd.CombinedOutput()
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v\n%s\nwant exit %d and %q", tc.args, err, out, tc.code, tc.want)
		}
	}
	// An unreachable endpoint is one clear line naming the URL, after the
	// retries, and the run ends (stdin closed).
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--retry-delay", "1ms", "-y", "x")
	cmd.Env = append(env, "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 1 || !strings.Contains(string(out), "127.0.0.1:1") {
		t.Errorf("unreachable endpoint: %v\n%s", err, out)
	}
}

func TestRunFollowupAutoAnswered(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turn("", small, call("t1", "ask_followup_question", map[string]any{"question": "Which port?",
			"follow_up": []map[string]any{{"text": "3000"}, {"text": "8080"}}})),
		complete("t2", "port chosen"))
	// Nothing on stdin answers the question; the first suggestion does.
	// The completion is accepted once it is asked.
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--output-format", "stream-json", "-y", "--followup-timeout", "10ms", "pick a port")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var m agent.Message
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Ask == agent.AskCompletionResult {
			io.WriteString(stdin, yes())
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	stdin.Close()
	if got := resultText(lastUser(t, fake.Requests()[1])[0]); got != "<answer>\n3000\n</answer>" {
		t.Errorf("the model got %q, want the first suggestion", got)
	}
}

func TestRunInterruptLeavesTaskResumable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on Windows")
	}
	ws := e2eWorkspace(t, agentIntents, nil)
	_, url := startFake(t, turnSelectIntent("t1"), turn("", small, write("t2", "app/a.txt", "a\n")))
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--output-format", "stream-json", "--auto-approve", "read", "write a")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var m agent.Message
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Ask == agent.AskTool {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdout)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "--resume") {
		t.Fatalf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(ws, "app", "a.txt")); err == nil {
		t.Error("the unapproved write happened")
	}
}
