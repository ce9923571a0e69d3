package agent

import (
	"fmt"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
)

func TestManageContextKeepsTaskAndPairs(t *testing.T) {
	var got []Message
	task := New("the task", Options{ContextWindow: 1000, OnEvent: func(e Event) {
		if e.Name == EventMessage {
			got = append(got, *e.Message)
		}
	}})
	task.history = []provider.Message{{Role: provider.User, Content: []provider.Block{{Type: provider.Text, Text: "<task>\nthe task\n</task>"}}}}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("t%d", i)
		task.history = append(task.history,
			provider.Message{Role: provider.Assistant, Content: []provider.Block{{Type: provider.ToolUse, ID: id, Name: "read_file", Input: []byte(`{}`)}}},
			provider.Message{Role: provider.User, Content: []provider.Block{{Type: provider.ToolResult, ToolUseID: id, Content: "x"}}})
	}
	task.usage.ContextTokens = 700 // below 80% of 1000
	task.manageContext()
	if len(task.history) != 9 {
		t.Fatalf("history cut below the limit: %d messages", len(task.history))
	}
	task.usage.ContextTokens = 900
	task.manageContext()
	h := task.history
	if len(h) != 5 || h[0].Content[0].Text != "<task>\nthe task\n</task>" {
		t.Fatalf("history after truncation: %d messages, first %+v", len(h), h[0])
	}
	for i := 1; i < len(h); i += 2 {
		if h[i].Role != provider.Assistant || h[i+1].Content[0].ToolUseID != h[i].Content[0].ID {
			t.Errorf("pair %d broken: %+v / %+v", i, h[i], h[i+1])
		}
	}
	if len(got) != 1 || got[0].Say != SayCondenseContext || got[0].ContextCondense == nil || got[0].ContextCondense.PrevContextTokens != 900 {
		t.Errorf("messages = %+v, want one condense_context", got)
	}
}
