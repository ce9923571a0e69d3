package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// fakeController plays a scripted task: it asks a follow-up question, waits
// for the answer, then completes. On the way it emits every event of the
// package once, so a client can check each one's shape.
type fakeController struct {
	mu      sync.Mutex
	n       int
	tasks   map[string]*fakeTask
	started []StartRequest
	answers []string
}

type fakeTask struct {
	emit    func(Event)
	answers chan string
	cancel  context.CancelFunc
}

func newFake() *fakeController { return &fakeController{tasks: map[string]*fakeTask{}} }

func clineMsg(ts int64, kind, name, text string) json.RawMessage {
	m := map[string]any{"ts": ts, "type": kind, "text": text}
	m[kind] = name
	b, _ := json.Marshal(m)
	return b
}

func (f *fakeController) Start(ctx context.Context, req StartRequest, emit func(Event)) (string, error) {
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("task-%d", f.n)
	ctx, cancel := context.WithCancel(ctx)
	t := &fakeTask{emit: emit, answers: make(chan string, 1), cancel: cancel}
	f.tasks[id] = t
	f.started = append(f.started, req)
	f.mu.Unlock()

	emit(TaskCreated(id))
	go func() {
		ts := time.Now().UnixMilli()
		emit(TaskStarted(id))
		emit(TaskFocused(id))
		emit(TaskActive(id))
		emit(MessageEvent(id, false, clineMsg(ts, "say", "text", req.Text)))
		emit(MessageEvent(id, false, clineMsg(ts+1, "say", "api_req_started", `{"request":"…"}`)))
		emit(MessageEvent(id, true, clineMsg(ts+1, "say", "api_req_started", `{"request":"…","tokensIn":10,"tokensOut":5,"cost":0.001}`)))
		emit(TaskModeSwitched(id, "ask"))
		emit(TaskToolFailed(id, "read_file", "no such file"))
		emit(TaskSpawned(id, id+".1"))
		emit(TaskPaused(id))
		emit(TaskUnpaused(id))
		q, _ := json.Marshal(map[string]any{"question": "Which port?", "suggest": []map[string]string{{"answer": "3000"}}})
		emit(MessageEvent(id, false, clineMsg(ts+2, "ask", "followup", string(q))))
		emit(TaskInteractive(id))
		var answer string
		select {
		case answer = <-t.answers:
		case <-ctx.Done():
			emit(TaskAborted(id))
			return
		}
		emit(TaskAskResponded(id))
		emit(MessageEvent(id, false, clineMsg(ts+3, "say", "user_feedback", answer)))
		emit(MessageEvent(id, false, clineMsg(ts+4, "say", "completion_result", "done")))
		usage := TokenUsage{TotalTokensIn: 10, TotalTokensOut: 5, TotalCost: 0.001, ContextTokens: 15}
		emit(TaskTokenUsageUpdated(id, usage))
		emit(TaskIdle(id))
		emit(TaskResumable(id))
		emit(TaskUnfocused(id))
		emit(TaskCompleted(id, usage, ToolUsage{"read_file": {Attempts: 1, Failures: 1}}, false))
	}()
	return id, nil
}

func (f *fakeController) task(id string) (*fakeTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[id]
	if !ok {
		return nil, fmt.Errorf("no task %q", id)
	}
	return t, nil
}

func (f *fakeController) Resume(ctx context.Context, id string, emit func(Event)) error {
	_, err := f.task(id)
	return err
}

func (f *fakeController) Cancel(id string) error {
	t, err := f.task(id)
	if err == nil {
		t.cancel()
	}
	return err
}

func (f *fakeController) Close(id string) error { return f.Cancel(id) }

func (f *fakeController) Answer(id, response, text string, images []string) error {
	t, err := f.task(id)
	if err != nil {
		return err
	}
	if response != MessageResponse {
		return fmt.Errorf("response %q", response)
	}
	f.mu.Lock()
	f.answers = append(f.answers, text)
	f.mu.Unlock()
	select {
	case t.answers <- text:
		return nil
	default:
		return fmt.Errorf("task %s has no pending ask", id)
	}
}
