package agentrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/agent"
	"github.com/intentgate/intentgate/agent/ipc"
	"github.com/intentgate/intentgate/internal/gate"
)

// agentTasks runs agent tasks for IPC clients, each on the governed runtime
// of the served workspace.
type agentTasks struct {
	rt *gate.Runtime

	mu    sync.Mutex
	tasks map[string]*ipcTask
}

type ipcTask struct {
	task   *agent.Task
	cancel context.CancelFunc
	done   chan struct{}
}

func newAgentTasks(rt *gate.Runtime) *agentTasks {
	return &agentTasks{rt: rt, tasks: map[string]*ipcTask{}}
}

// options are the agent's options for a StartNewTask configuration, on the
// served workspace's runtime.
func (a *agentTasks) options(o ipc.Options, emit func(ipc.Event)) (agent.Options, error) {
	auto, err := agent.ParseAutoApprove(strings.Join(o.AutoApprove, ","))
	if err != nil {
		return agent.Options{}, err
	}
	auto.MaxRequests = o.MaxRequests
	m := Model{Provider: o.Provider, Model: o.Model, BaseURL: o.BaseURL}
	if m.Provider == "" {
		m.Provider = "anthropic"
	}
	prov, model, err := NewProvider(m)
	if err != nil {
		return agent.Options{}, err
	}
	prices, err := agent.Prices()
	if err != nil {
		return agent.Options{}, err
	}
	opts := Governed(a.rt)
	opts.Provider, opts.Model, opts.Mode = prov, model, o.Mode
	opts.AutoApprove, opts.MaxMistakes = auto, o.MaxMistakes
	opts.Prices, opts.OnEvent = prices, translator(emit)
	return opts, nil
}

// translator turns the agent's events into the package's task events.
func translator(emit func(ipc.Event)) func(agent.Event) {
	var mu sync.Mutex
	seen := map[string]map[int64]bool{} // per task, the message timestamps sent
	return func(e agent.Event) {
		id := e.TaskID
		switch e.Name {
		case agent.EventTaskStarted:
			emit(ipc.TaskStarted(id))
		case agent.EventMessage:
			if e.Message == nil {
				return
			}
			mu.Lock()
			if seen[id] == nil {
				seen[id] = map[int64]bool{}
			}
			updated := seen[id][e.Message.TS]
			seen[id][e.Message.TS] = true
			mu.Unlock()
			raw, err := json.Marshal(e.Message)
			if err == nil {
				emit(ipc.MessageEvent(id, updated, raw))
			}
		case agent.EventStateChange:
			switch e.State.State {
			case agent.StateRunning, agent.StateStreaming:
				emit(ipc.TaskActive(id))
			case agent.StateWaitingForInput:
				emit(ipc.TaskInteractive(id))
			case agent.StateIdle:
				emit(ipc.TaskIdle(id))
			case agent.StateResumable:
				emit(ipc.TaskResumable(id))
			}
		case agent.EventModeSwitched:
			emit(ipc.TaskModeSwitched(id, e.Mode))
		case agent.EventAskResponded:
			emit(ipc.TaskAskResponded(id))
		case agent.EventToolFailed:
			emit(ipc.TaskToolFailed(id, e.Tool, e.Error))
		case agent.EventTokenUsage:
			if e.TokenUsage != nil {
				emit(ipc.Event{Name: ipc.EventTaskTokenUsageUpdated, Payload: []any{id, e.TokenUsage}})
			}
		case agent.EventSpawned:
			emit(ipc.TaskSpawned(id, e.ChildID))
		case agent.EventCompleted:
			usage := agent.TokenUsage{}
			if e.TokenUsage != nil {
				usage = *e.TokenUsage
			}
			tools := e.ToolUsage
			if tools == nil {
				tools = agent.ToolUsage{}
			}
			emit(ipc.Event{Name: ipc.EventTaskCompleted, Payload: []any{id, usage, tools, map[string]bool{"isSubtask": false}}})
		case agent.EventAborted:
			emit(ipc.TaskAborted(id))
		}
	}
}

func (a *agentTasks) run(ctx context.Context, t *agent.Task) {
	ctx, cancel := context.WithCancel(ctx)
	rt := &ipcTask{task: t, cancel: cancel, done: make(chan struct{})}
	a.mu.Lock()
	a.tasks[t.ID()] = rt
	a.mu.Unlock()
	go func() {
		defer close(rt.done)
		defer cancel()
		t.Run(ctx)
	}()
}

// adopt lets IPC clients answer and cancel t, a task started elsewhere
// (by `intentgate run`); cancel ends it and done closes when it ended.
func (a *agentTasks) adopt(t *agent.Task, cancel context.CancelFunc, done chan struct{}) {
	a.mu.Lock()
	a.tasks[t.ID()] = &ipcTask{task: t, cancel: cancel, done: done}
	a.mu.Unlock()
}

func (a *agentTasks) Start(ctx context.Context, req ipc.StartRequest, emit func(ipc.Event)) (string, error) {
	opts, err := a.options(req.Options, emit)
	if err != nil {
		return "", err
	}
	t := agent.New(req.Text, opts)
	emit(ipc.TaskCreated(t.ID()))
	a.run(ctx, t)
	return t.ID(), nil
}

func (a *agentTasks) Resume(ctx context.Context, id string, emit func(ipc.Event)) error {
	a.mu.Lock()
	_, running := a.tasks[id]
	a.mu.Unlock()
	if running {
		return fmt.Errorf("task %s is running", id)
	}
	opts, err := a.options(ipc.Options{}, emit)
	if err != nil {
		return err
	}
	t, err := agent.Resume(id, opts)
	if err != nil {
		return err
	}
	a.run(ctx, t)
	return nil
}

func (a *agentTasks) get(id string) (*ipcTask, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tasks[id]
	if !ok {
		return nil, fmt.Errorf("no running task %s", id)
	}
	return t, nil
}

func (a *agentTasks) Cancel(id string) error {
	t, err := a.get(id)
	if err != nil {
		return err
	}
	t.cancel()
	<-t.done
	return nil
}

func (a *agentTasks) Close(id string) error {
	if err := a.Cancel(id); err != nil {
		return err
	}
	a.mu.Lock()
	delete(a.tasks, id)
	a.mu.Unlock()
	return nil
}

func (a *agentTasks) Answer(id, response, text string, images []string) error {
	t, err := a.get(id)
	if err != nil {
		return err
	}
	return t.task.Respond(agent.Answer{Response: agent.Response(response), Text: text, Images: images})
}

// ServeIPC serves the IPC protocol (agent/ipc) on path, running each
// client's tasks on rt. stop closes the server.
func ServeIPC(path string, rt *gate.Runtime, log *slog.Logger) (stop func(), err error) {
	_, stop, err = serveIPC(path, rt, log)
	return stop, err
}

func serveIPC(path string, rt *gate.Runtime, log *slog.Logger) (*ipcServer, func(), error) {
	l, err := ipc.Listen(path)
	if err != nil {
		return nil, nil, err
	}
	tasks := newAgentTasks(rt)
	srv := ipc.NewServer(tasks, log)
	go srv.Serve(l)
	return &ipcServer{srv: srv, tasks: tasks}, func() { srv.Close() }, nil
}

// ipcServer is the IPC server `intentgate run` starts when
// ROO_CODE_IPC_SOCKET_PATH is set, as Roo Code does: the run's task is
// broadcast to its clients, who may answer its asks (SendMessage), cancel
// it, and start tasks of their own.
type ipcServer struct {
	srv   *ipc.Server
	tasks *agentTasks
}

// events is the OnEvent of the run's task for the clients.
func (s *ipcServer) events() func(agent.Event) { return translator(s.srv.Broadcast()) }

// adopt announces the run's task and hands it to the clients.
func (s *ipcServer) adopt(t *agent.Task, cancel context.CancelFunc, done chan struct{}) {
	s.srv.Broadcast()(ipc.TaskCreated(t.ID()))
	s.tasks.adopt(t, cancel, done)
	s.srv.Adopt(t.ID())
}
