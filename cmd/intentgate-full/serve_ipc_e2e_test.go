package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeIPCClient returns node and the installed node-ipc client of
// agent/ipc/testdata, or skips; under CI=true a missing one fails, since
// .ci/run installs both.
func nodeIPCClient(t *testing.T) (string, string) {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "agent", "ipc", "testdata", "node-client"))
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

// TestServeIPCNodeClientDrivesTheAgent: `intentgate serve --ipc` runs a
// real agent task against the scripted model server for a client built on
// node-ipc. The client gets its Ack, starts the task, answers the write's
// approval ask and a follow-up question with SendMessage, sees taskCompleted
// while the task waits on its completion ask, and closes the task. Every
// message either way validates with @roo-code/types' schemas (in the
// client). In the reference, a SendMessage answer to a tool's approval is a
// messageResponse, so the write is refused with the text as feedback: the
// file must not exist and the model must read the feedback.
func TestServeIPCNodeClientDrivesTheAgent(t *testing.T) {
	node, dir := nodeIPCClient(t)
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("Writing the server.", small, write("t2", "app/server.js", serverJS)),
		turn("", small, call("t3", "ask_followup_question", map[string]any{"question": "Which port?",
			"follow_up": []map[string]any{{"text": "3000"}, {"text": "8080"}}})),
		complete("t4", "the server plan is ready"))
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", url)
	sockDir, err := os.MkdirTemp("", "igipc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "ipc.sock")
	p := startServe(t, ws, "--socket", "none", "--ipc", sock)

	answers := `{"tool":"not yet: which port?","followup":"8080"}`
	cmd := exec.Command(node, filepath.Join(dir, "agent.mjs"), sock, "make an express server", answers)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s\nserve stderr: %s", err, stdout.String(), stderr.String(), p.stderr.String())
	}
	var out struct {
		ClientID string   `json:"clientId"`
		TaskID   string   `json:"taskId"`
		Events   []string `json:"events"`
		Answered []string `json:"answered"`
		Messages []struct {
			Type, Ask, Say string
		} `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	if out.TaskID == "" || out.ClientID == "" {
		t.Fatalf("client output %s", stdout.String())
	}
	if got := strings.Join(out.Answered, ","); got != "tool,followup" {
		t.Errorf("asks answered: %s, want tool,followup", got)
	}
	// The order of the task's life, as the client saw it.
	order := []string{"taskCreated", "taskStarted", "message", "taskAskResponded", "taskCompleted", "taskAborted"}
	i := 0
	for _, e := range out.Events {
		if i < len(order) && e == order[i] {
			i++
		}
	}
	if i != len(order) {
		t.Errorf("events %v do not contain %v in order", out.Events, order)
	}
	// taskCompleted came while the completion was still asked: after the
	// completion_result say and its ask, nothing answered it.
	var kinds []string
	for _, m := range out.Messages {
		kinds = append(kinds, m.Type+":"+m.Ask+m.Say)
	}
	if got := strings.Join(kinds, " "); !strings.Contains(got, "say:completion_result") {
		t.Errorf("messages %s lack the completion result", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if got := resultText(lastUser(t, reqs[2])[0]); !strings.Contains(got, "denied") || !strings.Contains(got, "not yet: which port?") {
		t.Errorf("after the write's ask the model got %q", got)
	}
	if got := resultText(lastUser(t, reqs[3])[0]); got != "<answer>\n8080\n</answer>" {
		t.Errorf("after the follow-up the model got %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "app", "server.js")); !os.IsNotExist(err) {
		t.Errorf("the refused write reached the disk: %v", err)
	}
}
