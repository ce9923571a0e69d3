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

// benchTurns is a script of n read_file calls and a completion.
func benchTurns(n int) []fakemodel.Turn {
	turns := make([]fakemodel.Turn, 0, n+1)
	for i := 0; i < n; i++ {
		args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("src/f%d.go", i)})
		turns = append(turns, fakemodel.Turn{Text: "Reading the next file.", Usage: fakemodel.Usage{Input: 100, Output: 10},
			Calls: []fakemodel.Call{{ID: fmt.Sprintf("t%d", i), Name: "read_file", Args: string(args)}}})
	}
	return append(turns, fakemodel.Turn{Calls: []fakemodel.Call{{ID: "done", Name: "attempt_completion", Args: `{"result":"ok"}`}}})
}

func benchLoop(b *testing.B, url string, store *Store) {
	auto, _ := ParseAutoApprove("all")
	var task *Task
	task = New("read every file", Options{
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: url}), Model: "claude-sonnet-4-5",
		Runtime: nopRuntime{}, Workspace: b.TempDir(), AutoApprove: auto, Store: store,
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
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLoopPerToolCall measures one turn of the loop (request built,
// streamed from the fake Anthropic server, presented, tool_result appended)
// with a runtime that does nothing, so the figure is the loop's cost beyond
// the governed dispatch. The server runs in a child process, as a model API
// is elsewhere: cpu-ns/op is the CPU time of this process per tool call
// (the loop, the SDK's SSE decoding, the HTTP client), which a loaded
// machine does not inflate the way it inflates ns/op. The history grows
// with b.N; use -benchtime 300x to compare runs.
func BenchmarkLoopPerToolCall(b *testing.B) {
	benchLoop(b, fakeProcess(b, benchTurns(b.N)), nil)
}

// BenchmarkLoopPerToolCallStored is the same loop with the task stored
// under a directory after every step, as intentgate run keeps it.
func BenchmarkLoopPerToolCallStored(b *testing.B) {
	benchLoop(b, fakeProcess(b, benchTurns(b.N)), &Store{Dir: b.TempDir()})
}

// BenchmarkLoopPerToolCallInProcess serves the script from this process,
// as the first version of the benchmark did: its cpu-ns/op includes the
// server's CPU.
func BenchmarkLoopPerToolCallInProcess(b *testing.B) {
	srv := httptest.NewServer(fakemodel.New(benchTurns(b.N)...))
	defer srv.Close()
	benchLoop(b, srv.URL, nil)
}
