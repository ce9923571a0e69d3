package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// TestRunMaxRequestsContinueAndStop: with --max-requests 2, the third
// request waits on auto_approval_max_req_reached; "yes" goes on for two more
// requests, "no" ends the run (exit 1, the task resumable).
func TestRunMaxRequestsContinueAndStop(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, write("t2", "app/a.txt", "a\n")),
		turn("", small, write("t3", "app/b.txt", "b\n")),
		complete("t4", "two files"))
	r := runBin(t, ws, url, "anthropic", yes()+yes(), "-y", "--max-requests", "2", "write two files")
	mustExit(t, r, 0)
	if n := len(fake.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	// The ask comes after two requests, once, and before the third
	// request; its text is the count.
	got := strings.Join(kinds(r.lines), " ")
	want := "say:text say:api_req_started say:api_req_started ask:auto_approval_max_req_reached say:api_req_started say:api_req_started say:completion_result ask:completion_result"
	if got != want {
		t.Errorf("messages:\n%s\nwant:\n%s", got, want)
	}
	for _, m := range collapse(r.lines) {
		if m.Ask == agent.AskAutoApprovalMaxReqReached {
			var c struct{ Count int }
			if err := json.Unmarshal([]byte(m.Text), &c); err != nil || c.Count != 2 {
				t.Errorf("auto_approval_max_req_reached text = %q, want the count 2", m.Text)
			}
		}
	}
	checkStates(t, r.lines)
	conformance(t, r.lines, &r.final)

	// Stopped at the ask: nothing after it ran.
	ws2 := e2eWorkspace(t, agentIntents, nil)
	fake2, url2 := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, write("t2", "app/a.txt", "a\n")),
		turn("", small, write("t3", "app/b.txt", "b\n")))
	r2 := runBin(t, ws2, url2, "anthropic", no(), "-y", "--max-requests", "2", "write two files")
	mustExit(t, r2, 1)
	if n := len(fake2.Requests()); n != 2 {
		t.Errorf("%d requests after stopping, want 2", n)
	}
	msgs := collapse(r2.lines)
	if last := msgs[len(msgs)-1]; last.Ask != agent.AskAutoApprovalMaxReqReached {
		t.Errorf("the stream ends with %s%s, want the ask", last.Ask, last.Say)
	}
	if r2.final.Outcome != agent.Failed || r2.final.State.State != agent.StateIdle || r2.final.State.Ask != agent.AskAutoApprovalMaxReqReached {
		t.Errorf("summary = %+v", r2.final)
	}
	if !strings.Contains(r2.stderr, "--resume") {
		t.Errorf("stderr does not say how to resume:\n%s", r2.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws2, "app", "b.txt")); err == nil {
		t.Error("the third request's write happened")
	}
	checkStates(t, r2.lines)
	conformance(t, r2.lines, &r2.final)
}

// TestRunCondensesContext: a request whose context nears the model's
// window (claude-sonnet-4-5: 200,000 tokens) makes the next turn condense
// the history with a summary from the model; the condense_context message
// conforms to clineMessageSchema and the task text stays in the next
// request.
func TestRunCondensesContext(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	big := fakemodel.Usage{Input: 170000, Output: 100}
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, write("t2", "app/a.txt", "a\n")),
		turn("", big, write("t3", "app/b.txt", "b\n")),
		turn("Summary: the intent is selected; app/a.txt is written; app/b.txt is being written.", fakemodel.Usage{Input: 3000, Output: 200}),
		complete("t5", "two files"))
	r := runBin(t, ws, url, "anthropic", "", "-y", "write two files")
	mustExit(t, r, 0)
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	var cc *agent.ContextCondense
	for _, m := range collapse(r.lines) {
		if m.Say == agent.SayCondenseContext {
			cc = m.ContextCondense
		}
	}
	// The summary request cost 3000 input and 200 output tokens at $3 and
	// $15 per million: $0.012.
	if cc == nil || cc.PrevContextTokens != 170100 || cc.NewContextTokens >= 170100 || cc.NewContextTokens <= 0 ||
		cc.Summary != "Summary: the intent is selected; app/a.txt is written; app/b.txt is being written." || cc.Cost < 0.011999 || cc.Cost > 0.012001 {
		t.Fatalf("contextCondense = %+v", cc)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[4].Body, &body); err != nil {
		t.Fatal(err)
	}
	first := body.Messages[0].Content
	if !strings.Contains(first[0]["text"].(string), "<task>\nwrite two files\n</task>") ||
		!strings.Contains(first[len(first)-1]["text"].(string), "app/b.txt is being written") {
		t.Errorf("first message after condensing: %v", first)
	}
	if len(body.Messages) != 5 {
		t.Errorf("%d messages after condensing, want 5 (task+summary, t2 call and result, t3 call and result)", len(body.Messages))
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(ws, "app", f)); err != nil {
			t.Errorf("app/%s: %v", f, err)
		}
	}
	wantIn := 100 + 100 + 170000 + 3000 + 100
	if r.final.TokenUsage.TotalTokensIn != wantIn {
		t.Errorf("tokens in = %d, want %d (the summary request counts)", r.final.TokenUsage.TotalTokensIn, wantIn)
	}
	checkStates(t, r.lines)
	conformance(t, r.lines, &r.final)
}
