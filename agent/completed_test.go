package agent

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// taskCompleted goes out when the result is presented, before the person
// answers `ask completion_result`, as in the reference: an unattended client
// sees the task complete. Feedback at that ask continues the task, which
// completes (and reports) a second time.
func TestTaskCompletedBeforeCompletionAsk(t *testing.T) {
	done := func(id, result string) fakemodel.Turn {
		return fakemodel.Turn{Usage: fakemodel.Usage{Input: 10, Output: 2},
			Calls: []fakemodel.Call{{ID: id, Name: "attempt_completion", Args: `{"result":"` + result + `"}`}}}
	}
	srv := httptest.NewServer(fakemodel.New(done("c1", "first"), done("c2", "second")))
	defer srv.Close()
	var (
		mu     sync.Mutex
		events []string
		task   *Task
	)
	answers := []Answer{{Response: MessageResponse, Text: "add a test"}, {Response: YesButtonClicked}}
	task = New("do it", Options{
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL}), Model: "claude-sonnet-4-5",
		Runtime: nopRuntime{}, Workspace: t.TempDir(),
		OnEvent: func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Name {
			case EventCompleted:
				if e.TokenUsage == nil {
					t.Error("taskCompleted without token usage")
				}
				events = append(events, "completed")
			case EventAborted:
				events = append(events, "aborted")
			case EventWaitingForInput:
				if e.State.Ask != AskCompletionResult {
					t.Errorf("unexpected ask %q", e.State.Ask)
					return
				}
				events = append(events, "ask")
				a := answers[0]
				answers = answers[1:]
				go task.Respond(a)
			}
		},
		System: func(string) string { return "system" },
		Tools:  func(string) []provider.Tool { return nil },
	})
	res, err := task.Run(context.Background())
	if err != nil || res.Outcome != Completed || res.Completion != "second" {
		t.Fatalf("run: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(events, ","); got != "completed,ask,completed,ask" {
		t.Errorf("events %s, want completed,ask,completed,ask", got)
	}
}
