package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

func TestTruncateKeepsTaskAndPairs(t *testing.T) {
	task := New("the task", Options{})
	task.history = []provider.Message{{Role: provider.User, Content: []provider.Block{{Type: provider.Text, Text: "<task>\nthe task\n</task>"}}}}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("t%d", i)
		task.history = append(task.history,
			provider.Message{Role: provider.Assistant, Content: []provider.Block{{Type: provider.ToolUse, ID: id, Name: "read_file", Input: []byte(`{}`)}}},
			provider.Message{Role: provider.User, Content: []provider.Block{{Type: provider.ToolResult, ToolUseID: id, Content: "x"}}})
	}
	// The loop condenses before the newest user message is added: the
	// history ends with the assistant's call.
	task.history = append(task.history, provider.Message{Role: provider.Assistant, Content: []provider.Block{{Type: provider.ToolUse, ID: "t5", Name: "read_file", Input: []byte(`{}`)}}})
	if got := task.truncate(900); got != 4 {
		t.Fatalf("dropped %d messages, want 4 (two of four pairs)", got)
	}
	h := task.history
	if len(h) != 6 || h[0].Content[0].Text != "<task>\nthe task\n</task>" || h[len(h)-1].Content[0].ID != "t5" {
		t.Fatalf("history after truncation: %d messages, first %+v", len(h), h[0])
	}
	for i := 1; i+1 < len(h); i += 2 {
		if h[i].Role != provider.Assistant || h[i+1].Content[0].ToolUseID != h[i].Content[0].ID {
			t.Errorf("pair %d broken: %+v / %+v", i, h[i], h[i+1])
		}
	}
}

// condenseScript: three reads, the third reporting a context near the
// window, then what answers the summary request, then a completion.
func condenseScript(summary fakemodel.Turn) []fakemodel.Turn {
	read := func(id string, in int) fakemodel.Turn {
		return fakemodel.Turn{Text: "Reading.", Usage: fakemodel.Usage{Input: in, Output: 10},
			Calls: []fakemodel.Call{{ID: id, Name: "read_file", Args: fmt.Sprintf(`{"path":"%s.go"}`, id)}}}
	}
	return []fakemodel.Turn{read("r1", 100), read("r2", 200), read("r3", 900), summary,
		{Usage: fakemodel.Usage{Input: 50, Output: 5}, Calls: []fakemodel.Call{{ID: "done", Name: "attempt_completion", Args: `{"result":"ok"}`}}}}
}

func runCondense(t *testing.T, turns []fakemodel.Turn) (*fakemodel.Server, *Result) {
	t.Helper()
	fake := fakemodel.New(turns...)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	auto, _ := ParseAutoApprove("all")
	prices, err := Prices()
	if err != nil {
		t.Fatal(err)
	}
	var task *Task
	task = New("read three files", Options{
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL}), Model: "claude-sonnet-4-5",
		Runtime: nopRuntime{}, Workspace: t.TempDir(), AutoApprove: auto, ContextWindow: 1000, Prices: prices,
		OnEvent: func(e Event) {
			if e.Name == EventWaitingForInput {
				go task.Respond(Answer{Response: YesButtonClicked})
			}
		},
		System: func(string) string { return "system" },
		Tools: func(string) []provider.Tool {
			return []provider.Tool{{Name: "read_file", Description: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
		},
	})
	res, err := task.Run(context.Background())
	if err != nil || res.Outcome != Completed {
		t.Fatalf("run: %v %+v", err, res)
	}
	return fake, res
}

type wireBody struct {
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
		} `json:"content"`
	} `json:"messages"`
}

func decodeBody(t *testing.T, rq fakemodel.Request) wireBody {
	t.Helper()
	var b wireBody
	if err := json.Unmarshal(rq.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCondenseAsksTheModelForASummary(t *testing.T) {
	fake, res := runCondense(t, condenseScript(fakemodel.Turn{Text: "The user wants three files read; r1 and r2 are read.", Usage: fakemodel.Usage{Input: 400, Output: 20}}))
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	// Request 4 asks for the summary of everything before the last three
	// messages: u0, a1, u1 with the summary request appended.
	sum := decodeBody(t, reqs[3])
	if sum.System[0].Text != summaryPrompt {
		t.Errorf("summary request system prompt = %q", sum.System[0].Text)
	}
	if len(sum.Messages) != 3 {
		t.Fatalf("summary request has %d messages, want 3 (task, r1 call, r1 result)", len(sum.Messages))
	}
	lastMsg := sum.Messages[2]
	if lastMsg.Content[0].ToolUseID != "r1" || lastMsg.Content[len(lastMsg.Content)-1].Text != summaryRequest {
		t.Errorf("summary request's last message = %+v", lastMsg)
	}
	// Request 5 continues from the task with the summary, then the kept
	// tail: the r2 call and result, the r3 call and (new) its result.
	next := decodeBody(t, reqs[4])
	var roles []string
	for _, m := range next.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		t.Fatalf("after condensing the roles are %v", roles)
	}
	first := next.Messages[0].Content
	if !strings.Contains(first[0].Text, "<task>\nread three files\n</task>") {
		t.Errorf("the task text is gone: %+v", first[0])
	}
	if !strings.Contains(first[len(first)-1].Text, "The user wants three files read; r1 and r2 are read.") {
		t.Errorf("the summary is not in the first message: %+v", first)
	}
	if next.Messages[1].Content[1].ID != "r2" || next.Messages[2].Content[0].ToolUseID != "r2" || next.Messages[3].Content[1].ID != "r3" || next.Messages[4].Content[0].ToolUseID != "r3" {
		t.Errorf("kept tail = %+v", next.Messages[1:])
	}
	var cc *ContextCondense
	for _, m := range res.Messages {
		if m.Say == SayCondenseContext {
			cc = m.ContextCondense
		}
		if m.Say == SayCondenseContextError {
			t.Errorf("unexpected %s: %s", m.Say, m.Text)
		}
	}
	if cc == nil {
		t.Fatal("no condense_context message")
	}
	// The context of request 3 was 900 input + 10 output tokens; the cost
	// is the summary request's at claude-sonnet-4-5's prices ($3/M in,
	// $15/M out): 400*3e-6 + 20*15e-6 = 0.0015.
	if cc.PrevContextTokens != 910 || cc.NewContextTokens <= 0 || cc.NewContextTokens >= 910 || math.Abs(cc.Cost-0.0015) > 1e-12 || cc.Summary != "The user wants three files read; r1 and r2 are read." {
		t.Errorf("contextCondense = %+v", cc)
	}
	// The summary's tokens count in the task's totals.
	if res.TokenUsage.TotalTokensIn != 100+200+900+400+50 || res.TokenUsage.TotalTokensOut != 10+10+10+20+5 {
		t.Errorf("token usage = %+v", res.TokenUsage)
	}
}

func TestCondenseFailureFallsBackToSlidingWindow(t *testing.T) {
	fake, res := runCondense(t, condenseScript(fakemodel.Turn{Status: 400}))
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	next := decodeBody(t, reqs[4])
	// u0, a1, u1, a2, u2, a3 had one pair after the task dropped (half of
	// two pairs): u0, a2, u2, a3, and the new results.
	if len(next.Messages) != 5 || next.Messages[0].Content[0].Text != "<task>\nread three files\n</task>" || next.Messages[1].Content[1].ID != "r2" {
		t.Fatalf("after truncation: %+v", next.Messages)
	}
	var errText string
	for _, m := range res.Messages {
		if m.Say == SayCondenseContext {
			t.Errorf("condense_context after a failed summary: %+v", m)
		}
		if m.Say == SayCondenseContextError {
			errText = m.Text
		}
	}
	if !strings.Contains(errText, "the summary request failed") || !strings.Contains(errText, "the 2 oldest messages after the task were dropped") {
		t.Errorf("condense_context_error = %q", errText)
	}
}
