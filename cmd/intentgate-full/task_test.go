package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentgate/intentgate/agent/ipc"
)

// scriptedTasks is a controller whose tasks ask one follow-up question and
// complete with the answer as their result; cancelled, they abort.
type scriptedTasks struct {
	mu      sync.Mutex
	n       int
	answers map[string]chan string
	stops   map[string]context.CancelFunc
	started []ipc.StartRequest
}

func (s *scriptedTasks) Start(ctx context.Context, req ipc.StartRequest, emit func(ipc.Event)) (string, error) {
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("t%d", s.n)
	ans := make(chan string, 1)
	ctx, stop := context.WithCancel(ctx)
	s.answers[id], s.stops[id] = ans, stop
	s.started = append(s.started, req)
	s.mu.Unlock()
	emit(ipc.TaskCreated(id))
	go func() {
		emit(ipc.TaskStarted(id))
		msg := func(ask, say, text string) json.RawMessage {
			m := map[string]any{"ts": time.Now().UnixMilli(), "text": text}
			if ask != "" {
				m["type"], m["ask"] = "ask", ask
			} else {
				m["type"], m["say"] = "say", say
			}
			b, _ := json.Marshal(m)
			return b
		}
		emit(ipc.MessageEvent(id, false, msg("followup", "", `{"question":"which port?"}`)))
		select {
		case a := <-ans:
			emit(ipc.TaskAskResponded(id))
			emit(ipc.MessageEvent(id, false, msg("", "completion_result", "listening on "+a)))
			emit(ipc.TaskCompleted(id, ipc.TokenUsage{TotalTokensIn: 3, TotalTokensOut: 4}, nil, false))
		case <-ctx.Done():
			emit(ipc.TaskAborted(id))
		}
	}()
	return id, nil
}

func (s *scriptedTasks) Resume(context.Context, string, func(ipc.Event)) error {
	return fmt.Errorf("no stored tasks")
}

func (s *scriptedTasks) Cancel(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop, ok := s.stops[id]
	if !ok {
		return fmt.Errorf("no task %s", id)
	}
	stop()
	return nil
}

func (s *scriptedTasks) Close(id string) error { return s.Cancel(id) }

func (s *scriptedTasks) Answer(id, response, text string, images []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.answers[id] <- text:
		return nil
	default:
		return fmt.Errorf("task %s is not asking", id)
	}
}

// The task command drives the IPC server as a person would from a shell:
// start follows a task to completion once send answered its question;
// cancel ends another that watch follows.
func TestTaskCommand(t *testing.T) {
	bin := e2eBinary(t)
	dir, err := os.MkdirTemp("", "igtask")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "ipc.sock")
	l, err := ipc.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctl := &scriptedTasks{answers: map[string]chan string{}, stops: map[string]context.CancelFunc{}}
	srv := ipc.NewServer(ctl, nil)
	go srv.Serve(l)
	defer srv.Close()

	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"task"}, args...)...)
		cmd.Env = append(os.Environ(), ipcSocketEnv+"="+sock)
		return cmd
	}

	start := run("start", "--mode", "architect", "--provider", "ollama", "--model", "qwen3", "--auto-approve", "read,edit", "--max-requests", "9", "serve it")
	stdout, _ := start.StdoutPipe()
	var stderr strings.Builder
	start.Stderr = &stderr
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev ipc.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("start printed %q: %v", sc.Text(), err)
		}
		names = append(names, string(ev.Name))
		if ev.Name == ipc.EventMessage && strings.Contains(sc.Text(), `"followup"`) {
			if out, err := run("send", "port 8080").CombinedOutput(); err != nil {
				t.Fatalf("task send: %v\n%s", err, out)
			}
		}
		if ev.Name == ipc.EventMessage && strings.Contains(sc.Text(), "listening on port 8080") {
			names = append(names, "(answer arrived)")
		}
	}
	if err := start.Wait(); err != nil {
		t.Fatalf("task start: %v\n%s", err, stderr.String())
	}
	want := "taskCreated,taskStarted,message,taskAskResponded,message,(answer arrived),taskCompleted"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("start printed %s, want %s", got, want)
	}
	ctl.mu.Lock()
	o := ctl.started[0].Options
	ctl.mu.Unlock()
	if o.Mode != "architect" || o.Provider != "openai" || o.Model != "qwen3" || strings.Join(o.AutoApprove, ",") != "read,edit" || o.MaxRequests != 9 {
		t.Errorf("the task started with %+v", o)
	}

	out, err := run("start", "--no-watch", "second").Output()
	id := strings.TrimSpace(string(out))
	if err != nil || id != "t2" {
		t.Fatalf("start --no-watch = %q, %v", out, err)
	}
	watch := run("watch", "--task", id)
	var watched strings.Builder
	watch.Stdout = &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	// watch sees the events that happen after it connected: cancel only
	// once its connection is the server's only one.
	for srv.Clients() != 1 {
		time.Sleep(10 * time.Millisecond)
	}
	if out, err := run("cancel", id).CombinedOutput(); err != nil {
		t.Fatalf("task cancel: %v\n%s", err, out)
	}
	if err := watch.Wait(); err != nil {
		t.Fatalf("task watch: %v", err)
	}
	if !strings.Contains(watched.String(), `"eventName":"taskAborted","payload":["t2"]`) {
		t.Errorf("watch printed %q, want taskAborted of t2", watched.String())
	}

	// Usage errors exit 2 and say what to do.
	cmd := exec.Command(bin, "task", "start", "x")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); exitCodeOf(err) != 2 || !strings.Contains(string(out), ipcSocketEnv) {
		t.Errorf("start without a socket = %v, %s", err, out)
	}
	if out, err := run("start", "--provider", "bedrock", "x").CombinedOutput(); exitCodeOf(err) != 2 || !strings.Contains(string(out), "bedrock") {
		t.Errorf("start with an unsupported provider = %v, %s", err, out)
	}
}

func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
