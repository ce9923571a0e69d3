package ipc

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// needNode returns the node binary and the installed client directory, or
// skips; under CI=true a missing one fails, since .ci/run installs both.
func needNode(t *testing.T) (string, string) {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata", "node-client"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "node-ipc"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and %s/node_modules are required under CI (npm ci there): %v", dir, err)
		}
		t.Skipf("needs node and `npm ci` in %s: %v", dir, err)
	}
	return node, dir
}

// TestNodeIPCClient: a client built on node-ipc, as Roo Code's is, connects,
// gets its Ack, starts a task, answers the task's follow-up question with
// SendMessage and follows the events to taskCompleted, checking every
// message either way with @roo-code/types' schemas. The tasks are played by
// the fake controller.
func TestNodeIPCClient(t *testing.T) {
	node, dir := needNode(t)
	f, sock, _ := startServer(t)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), sock, "make a server", "use port 8080")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		ClientID   string      `json:"clientId"`
		TaskID     string      `json:"taskId"`
		Events     []EventName `json:"events"`
		EventNames []EventName `json:"eventNames"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	if out.TaskID != "task-1" {
		t.Errorf("taskId = %q, want task-1", out.TaskID)
	}
	// Go and the package agree on the event names, in order.
	if toJSON(out.EventNames) != toJSON(EventNames) {
		t.Errorf("package event names %v, Go has %v", out.EventNames, EventNames)
	}
	seen := map[EventName]bool{}
	for _, e := range out.Events {
		seen[e] = true
	}
	for _, e := range EventNames {
		if e == EventEvalPass || e == EventEvalFail {
			continue // evaluation runs only; intentgate has none
		}
		if !seen[e] {
			t.Errorf("the client never received a valid %s event", e)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.answers) != 1 || f.answers[0] != "use port 8080" {
		t.Errorf("answers = %q", f.answers)
	}
	o := f.started[0].Options
	if o.Provider != "anthropic" || o.Model != "claude-sonnet-4-20250514" || o.Mode != "code" || o.MaxRequests != 7 ||
		toJSON(o.AutoApprove) != `["read","mcp"]` || f.started[0].Text != "make a server" {
		t.Errorf("task started with %+v", f.started[0])
	}
}
