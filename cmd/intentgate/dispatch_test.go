package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/internal/dispatch"
)

// resultLine is one answer of the dispatch front door, as its tests read it.
type resultLine = dispatch.Result

// The dispatch command, constructed and run in the test process: --agent
// and --model fill in calls that name none, every line gets one answer in
// order, and a workspace with no .orchestration/ is refused naming init.
func TestDispatchCommandFlagsAndOutput(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".orchestration", "active_intents.yaml"), []byte(e2eIntents), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	root := newRoot(strings.NewReader(`{"id":"1","session":"s","tool":"read_file","args":{"path":"README.md"}}
not json
{"id":"3","session":"s","tool":"write_to_file","args":{"path":"src/a.go","content":"x"}}
`), &out, &errw)
	root.SetArgs([]string{"dispatch", "--workspace", filepath.Join(ws, "README.md", ".."), "--agent", "flag-agent", "--model", "flag/model"})
	if err := root.Execute(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, errw.String())
	}
	var got []resultLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r resultLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		got = append(got, r)
	}
	if len(got) != 3 {
		t.Fatalf("%d answers, want 3:\n%s", len(got), out.String())
	}
	if !got[0].OK || !strings.Contains(got[0].Output, "hello") {
		t.Errorf("read_file: %+v, want the file's content", got[0])
	}
	if got[1].OK || got[1].ID != "" || !strings.Contains(got[1].Error, "line 2: not a call") {
		t.Errorf("line 2: %+v, want an error naming the line", got[1])
	}
	if got[2].OK || got[2].Denial == nil || got[2].Denial.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("write without an intent: %+v, want NO_ACTIVE_INTENT", got[2])
	}
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"flag-agent"`) || !strings.Contains(string(b), `"flag/model"`) {
		t.Errorf("the ledger does not name --agent and --model:\n%s", b)
	}

	none := t.TempDir()
	root = newRoot(strings.NewReader(""), &out, &errw)
	root.SetArgs([]string{"dispatch", "-w", none})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "intentgate init") {
		t.Errorf("dispatch where no workspace is: %v, want a refusal naming intentgate init", err)
	}
	if _, err := os.Stat(filepath.Join(none, ".orchestration")); err == nil {
		t.Error("dispatch created .orchestration/ where there was none")
	}
}
