package mcphub_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
)

// A session whose reads are held in memory (an `intentgate mcp`
// connection's own session) has them counted by the MCP tools' hash lock
// too, and an unread file is still refused.
func TestHeldReadCountsForMCPTools(t *testing.T) {
	e := newEnv(t)
	h := hooks.NewHeldSessions(e.rt.Stores().Sessions)
	call := func(tool string, args map[string]any) error {
		raw, _ := json.Marshal(args)
		c := &engine.Call{ID: "held-" + tool, Session: "held", Tool: tool, Args: raw, Agent: engine.Agent{Name: "test", Model: "test/model"}}
		h.Hold(c)
		_, err := e.rt.Dispatch(context.Background(), c)
		return err
	}
	if err := call(hooks.SelectTool, map[string]any{"intent_id": "INT-001"}); err != nil {
		t.Fatal(err)
	}
	edit := fsArgs("edit_file", map[string]any{"path": "src/a.txt", "edits": []map[string]string{{"oldText": "two", "newText": "TWO"}}})
	if d, ok := engine.AsDenial(call(mcphub.UseToolName, edit)); !ok || d.Code != engine.NotRead {
		t.Fatalf("edit of an unread file: %v, want NOT_READ", d)
	}
	if err := call("read_file", map[string]any{"path": "src/a.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := call(mcphub.UseToolName, edit); err != nil {
		t.Fatalf("edit after a held read: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "src", "a.txt")); string(b) != "one\nTWO\n" {
		t.Errorf("src/a.txt = %q, want the edit", b)
	}
}
