//go:build unix

package agentrun

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/agent/ipc"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

func governedDir(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	intents := "active_intents:\n  - id: INT-001\n    name: app\n    status: IN_PROGRESS\n    owned_scope: [\"app/**\"]\n"
	if err := os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".orchestration", "active_intents.yaml"), []byte(intents), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// ipcRun runs a task on a workspace with a served IPC socket, as `intentgate
// run` does when ROO_CODE_IPC_SOCKET_PATH is set, and follows its events
// through intentgate's Go IPC client until taskCompleted; answer is called
// with each finished ask the client sees. It returns the run's result, the
// event names and the model's requests.
func ipcRun(t *testing.T, turns []fakemodel.Turn, auto string, answer func(c *ipc.Client, m agent.Message)) (*agent.Result, []string, []fakemodel.Request) {
	t.Helper()
	ws := governedDir(t)
	fake := fakemodel.New(turns...)
	// The first request waits for the client, so that it sees the task
	// from its first request on.
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { <-release })
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	sock := filepath.Join(t.TempDir(), "roo.sock")
	stdin, stdinW := io.Pipe()
	type ran struct {
		res *agent.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		var out, errw strings.Builder
		res, err := Run(context.Background(), Options{Workspace: ws, Model: Model{Provider: "anthropic", BaseURL: srv.URL},
			Output: "json", AutoApprove: auto, IPCSocket: sock}, "the task", stdin, &out, &errw)
		done <- ran{res, err}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var c *ipc.Client
	for {
		var err error
		if c, err = ipc.Dial(ctx, sock); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no IPC server on %s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer c.Close()
	close(release)
	var names []string
	seen := map[int64]bool{}
	for {
		m, err := c.Next()
		if err != nil {
			t.Fatalf("after events %v: %v", names, err)
		}
		if m.Type != ipc.TypeTaskEvent {
			continue
		}
		var ev struct {
			Name    string            `json:"eventName"`
			Payload []json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Name)
		if ev.Name == string(ipc.EventMessage) {
			var p struct {
				Message agent.Message `json:"message"`
			}
			json.Unmarshal(ev.Payload[0], &p)
			if p.Message.Type == agent.TypeAsk && !p.Message.IsPartial() && !seen[p.Message.TS] {
				seen[p.Message.TS] = true
				answer(c, p.Message)
			}
		}
		if ev.Name == string(ipc.EventTaskCompleted) {
			break
		}
	}
	stdinW.Close() // the completion is accepted
	r := <-done
	if r.err != nil || r.res.Outcome != agent.Completed {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	return r.res, names, fake.Requests()
}

func args(v any) string { b, _ := json.Marshal(v); return string(b) }

func send(t *testing.T, c *ipc.Client, text string) {
	if err := c.Send(ipc.CommandSendMessage, ipc.SendMessage{Text: text}); err != nil {
		t.Error(err)
	}
}

// TestRunServesIPC: with a socket to serve (ROO_CODE_IPC_SOCKET_PATH),
// `intentgate run` broadcasts its task's events to the IPC clients, and a
// client, here intentgate's Go client, answers the task's question with
// SendMessage; the task then completes.
func TestRunServesIPC(t *testing.T) {
	answered := false
	_, names, reqs := ipcRun(t, []fakemodel.Turn{
		{Calls: []fakemodel.Call{{ID: "t1", Name: "ask_followup_question",
			Args: args(map[string]any{"question": "Which port?", "follow_up": []map[string]any{{"text": "3000"}}})}}},
		{Calls: []fakemodel.Call{{ID: "t2", Name: "attempt_completion", Args: args(map[string]any{"result": "port chosen"})}}},
	}, "read", func(c *ipc.Client, m agent.Message) {
		if m.Ask == agent.AskFollowup {
			answered = true
			send(t, c, "8080")
		}
	})
	if !answered {
		t.Error("the client never saw the question")
	}
	body := ""
	if len(reqs) == 2 {
		body = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(reqs[1].Body))
	}
	if !strings.Contains(body, `<answer>\n8080\n</answer>`) {
		t.Errorf("the model did not get the client's answer: %d requests", len(reqs))
	}
	for _, want := range []string{"taskAskResponded", "taskCompleted", "message"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("events %v lack %s", names, want)
		}
	}
}

// TestRunIPCLetsACommandKeepRunning: an IPC client answers a running
// command's command_output ask with SendMessage, which lets it keep running
// with the message as feedback to the model, as in Roo Code; the command
// is killed when the task ends.
func TestRunIPCLetsACommandKeepRunning(t *testing.T) {
	_, _, reqs := ipcRun(t, []fakemodel.Turn{
		{Calls: []fakemodel.Call{{ID: "t1", Name: "select_active_intent", Args: args(map[string]any{"intent_id": "INT-001"})}}},
		{Calls: []fakemodel.Call{{ID: "t2", Name: "execute_command", Args: args(map[string]any{"command": "echo serving; sleep 60"})}}},
		{Calls: []fakemodel.Call{{ID: "t3", Name: "attempt_completion", Args: args(map[string]any{"result": "started"})}}},
	}, "read,command", func(c *ipc.Client, m agent.Message) {
		if m.Ask == agent.AskCommandOutput {
			send(t, c, "leave it running")
		}
	})
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	body := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(reqs[2].Body))
	for _, want := range []string{"Command is still running in terminal", `Here's the output so far:\nserving`, `<feedback>\nleave it running\n</feedback>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the model's third request lacks %q", want)
		}
	}
	if strings.Contains(body, "You will be updated on the terminal status") {
		t.Error("with feedback the result keeps the line the feedback replaces")
	}
}
