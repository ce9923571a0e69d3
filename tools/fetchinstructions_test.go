package tools

import (
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

func TestFetchInstructions(t *testing.T) {
	ws := rtWorkspace(t, nil)
	for task, want := range map[string][]string{
		"create_mode":       {".orchestration/modes.yaml", "customModes:", "fileRegex", "PROTECTED_PATH"},
		"create_mcp_server": {".roo/mcp.json", "mcpServers", "use_mcp_tool", "readOnlyHint", "owned_scope"},
	} {
		r, err := rtRun(t, ws, FetchInstructions(), "fetch_instructions", map[string]any{"task": task})
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		for _, w := range want {
			if !strings.Contains(r.Output, w) {
				t.Errorf("%s instructions lack %q", task, w)
			}
		}
	}
	for _, task := range []string{"create_tool", "../../etc/passwd", "create_mode.md", ""} {
		_, err := rtRun(t, ws, FetchInstructions(), "fetch_instructions", map[string]any{"task": task})
		if d, ok := engine.AsDenial(err); !ok || d.Code != engine.InvalidArgument || !strings.Contains(d.Hint, "create_mcp_server, create_mode") {
			t.Errorf("task %q: %v, want INVALID_ARGUMENT listing the tasks", task, err)
		}
	}
}
