package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// nopRuntime allows every call and runs nothing: what remains is the loop.
type nopRuntime struct{}

func (nopRuntime) DispatchApproved(ctx context.Context, c *engine.Call, approve engine.Approve) (*engine.Result, error) {
	if approve != nil {
		if err := approve(ctx, c); err != nil {
			return nil, err
		}
	}
	return &engine.Result{Output: "ok"}, nil
}

// BenchmarkLoopPerToolCall measures one turn of the loop (request built,
// streamed from the in-process fake Anthropic server, presented, tool_result
// appended) with a runtime that does nothing, so the figure is the loop's
// cost beyond the governed dispatch. It includes the HTTP round trip and the
// SDK's SSE decoding.
func BenchmarkLoopPerToolCall(b *testing.B) {
	turns := make([]fakemodel.Turn, 0, b.N+1)
	for i := 0; i < b.N; i++ {
		args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("src/f%d.go", i)})
		turns = append(turns, fakemodel.Turn{Text: "Reading the next file.", Usage: fakemodel.Usage{Input: 100, Output: 10},
			Calls: []fakemodel.Call{{ID: fmt.Sprintf("t%d", i), Name: "read_file", Args: string(args)}}})
	}
	turns = append(turns, fakemodel.Turn{Calls: []fakemodel.Call{{ID: "done", Name: "attempt_completion", Args: `{"result":"ok"}`}}})
	srv := httptest.NewServer(fakemodel.New(turns...))
	defer srv.Close()
	auto, _ := ParseAutoApprove("all")
	var task *Task
	task = New("read every file", Options{
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL}), Model: "claude-sonnet-4-5",
		Runtime: nopRuntime{}, Workspace: b.TempDir(), AutoApprove: auto,
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
	b.ResetTimer()
	cpu := processCPU()
	res, err := task.Run(context.Background())
	if err != nil || res.Outcome != Completed {
		b.Fatalf("run: %v %+v", err, res)
	}
	// CPU of the whole process, the fake server's share included: an upper
	// bound of the loop's own cost that a loaded machine does not inflate
	// the way it inflates ns/op.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
