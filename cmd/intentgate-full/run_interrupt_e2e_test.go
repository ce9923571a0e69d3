//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// TestRunInterruptMidRequestThenResume: Ctrl-C (SIGINT) while the model is
// answering ends the request as user_cancelled and the run with exit 1;
// --resume then sends the interrupted turn again and the task completes.
func TestRunInterruptMidRequestThenResume(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake := fakemodel.New(turnSelectIntent("t1"), turn("", small, write("t2", "app/a.txt", "a\n")), complete("t3", "done"))
	stalled := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			// The second request hangs until the client goes away.
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(stalled)
			<-r.Context().Done()
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()

	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--output-format", "stream-json", "-y", "write a")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-stalled
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var lines []agent.Message
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var m agent.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "--resume") {
		t.Fatalf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	// The interrupted request says so.
	var last agent.APIReqInfo
	for _, m := range collapse(lines) {
		if m.Say == agent.SayAPIReqStarted {
			last = agent.APIReqInfo{}
			if err := json.Unmarshal([]byte(m.Text), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last.CancelReason != "user_cancelled" {
		t.Errorf("the interrupted request's api_req_started = %+v, want cancelReason user_cancelled", last)
	}
	checkStates(t, lines)
	conformance(t, lines, nil)
	var summary struct {
		TaskID string `json:"taskId"`
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, `{"`) {
			json.Unmarshal([]byte(l), &summary)
		}
	}
	if summary.TaskID == "" {
		t.Fatalf("no task id on stderr:\n%s", stderr.String())
	}

	// Resumed: yes to resume_task, and the interrupted turn goes again.
	r := runBin(t, ws, srv.URL, "anthropic", yes(), "-y", "--resume", summary.TaskID)
	mustExit(t, r, 0)
	if k := kinds(r.lines); len(k) == 0 || k[0] != "ask:resume_task" {
		t.Errorf("the resumed run starts with %v", k)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests reached the script, want 3", len(reqs))
	}
	u := lastUser(t, reqs[1])
	if u[0]["tool_use_id"] != "t1" || !strings.Contains(resultText(u[0]), "INT-001") {
		t.Errorf("the resumed request does not carry the interrupted turn's result: %v", u)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "app", "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("app/a.txt after the resumed task: %q, %v", b, err)
	}
	if r.final.Outcome != agent.Completed {
		t.Errorf("resumed outcome = %s", r.final.Outcome)
	}
}
