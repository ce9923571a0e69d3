package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tool usage analytics through the binary: a session whose read_file fails
// 3 times in 4 is problematic in session show and in trace stats, in text
// and in JSON; list_files, never failing, is not.
func TestToolUsageAnalytics(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/a.txt": "a\n"})
	s := startDispatch(t, ws, "usage")
	toolsOK(t, s, "read_file", map[string]any{"path": "src/a.txt"})
	for _, p := range []string{"src/missing1", "src/missing2", "src/missing3"} {
		if r := toolsCall(s, "read_file", map[string]any{"path": p}); r.OK {
			t.Fatalf("read_file %s succeeded", p)
		}
	}
	for range 3 {
		toolsOK(t, s, "list_files", map[string]any{"path": "src"})
	}
	s2 := startDispatch(t, ws, "usage-2")
	toolsOK(t, s2, "read_file", map[string]any{"path": "src/a.txt"})
	s.close()
	s2.close()

	out, code := runIG(t, "session", "show", "usage", "-w", ws)
	if code != 0 {
		t.Fatalf("session show: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"  list_files         3         0     100%",
		"  read_file          4         3      25%",
		"  total              7         3      57%",
		"most used:   read_file (4), list_files (3)",
		"problematic: read_file (3 of 4 failed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("session show lacks %q:\n%s", want, out)
		}
	}

	out, _ = runIG(t, "session", "show", "usage", "-w", ws, "--json")
	var sj struct {
		ID        string `json:"id"`
		ToolUsage struct {
			Tools []struct {
				Tool        string  `json:"tool"`
				SuccessRate float64 `json:"success_rate"`
			} `json:"tools"`
			Problematic []struct {
				Tool        string  `json:"tool"`
				FailureRate float64 `json:"failure_rate"`
			} `json:"problematic"`
		} `json:"tool_usage"`
	}
	if err := json.Unmarshal([]byte(out), &sj); err != nil {
		t.Fatalf("session show --json: %v\n%s", err, out)
	}
	if sj.ID != "usage" || len(sj.ToolUsage.Problematic) != 1 || sj.ToolUsage.Problematic[0].FailureRate != 0.75 {
		t.Errorf("session show --json = %+v", sj)
	}

	out, _ = runIG(t, "trace", "stats", "-w", ws)
	for _, want := range []string{"tool usage (all 2 sessions):", "  read_file          5         3      40%", "problematic: read_file (3 of 5 failed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace stats lacks %q:\n%s", want, out)
		}
	}
	out, _ = runIG(t, "trace", "stats", "-w", ws, "--json")
	var tj struct {
		Sessions  int `json:"sessions"`
		ToolUsage struct {
			Total struct {
				Attempts int `json:"attempts"`
				Failures int `json:"failures"`
			} `json:"total"`
			MostUsed []struct {
				Tool string `json:"tool"`
			} `json:"most_used"`
		} `json:"tool_usage"`
		ByTool []any `json:"by_tool"`
	}
	if err := json.Unmarshal([]byte(out), &tj); err != nil {
		t.Fatalf("trace stats --json: %v\n%s", err, out)
	}
	if tj.Sessions != 2 || tj.ToolUsage.Total.Attempts != 8 || tj.ToolUsage.Total.Failures != 3 || tj.ToolUsage.MostUsed[0].Tool != "read_file" || tj.ByTool == nil {
		t.Errorf("trace stats --json = %+v", tj)
	}
}
