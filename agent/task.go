package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/tools"
)

// Runtime is the governed runtime every tool call goes through:
// DispatchApproved runs the pre-hooks, then approve (when not nil: the
// person is asked), then the tool and the post-hooks, so the pre-hooks run
// once and a refused call is never put to the person. *engine.Engine and the
// workspace runtime satisfy it.
type Runtime interface {
	DispatchApproved(ctx context.Context, c *engine.Call, approve engine.Approve) (*engine.Result, error)
}

// Options configure a task.
type Options struct {
	Provider provider.Provider
	Model    string
	Runtime  Runtime
	// WS is set on every call; a runtime that resolves the workspace itself
	// may leave it nil.
	WS        *engine.Workspace
	Workspace string // the workspace root directory
	Mode      string
	// System returns the system prompt of a mode; Tools its tools.
	System   func(mode string) string
	Tools    func(mode string) []provider.Tool
	ModeName func(slug string) (string, bool)
	// ActiveIntent returns the session's active intent, for the
	// environment details.
	ActiveIntent func(session string) string

	AutoApprove AutoApprove
	// FollowupTimeout is how long an auto-approved follow-up question waits
	// for the person before its first suggestion answers; 0 means 60s.
	FollowupTimeout time.Duration
	MaxMistakes     int // 0 means 3
	// Retries is how often a failed request is retried before asking
	// api_req_failed; 0 means 3. RetryDelay is the first backoff (doubled
	// each time); 0 means 2s.
	Retries    int
	RetryDelay time.Duration
	MaxTokens  int
	Prices     map[string]Price
	// ContextWindow overrides the model's window from the price table.
	ContextWindow int
	// Store persists the task; nil keeps it in memory.
	Store *Store
	// OnEvent receives every event, in order, on the task's goroutine; it
	// must not block for long.
	OnEvent func(Event)
	Now     func() time.Time
	// ParentID is set for subtasks.
	ParentID string
	// CommandAskDelay is how long a command runs before command_output
	// asks whether to let it keep running or abort it; 0 means 2s.
	CommandAskDelay time.Duration
}

// EventName names an event; the names are RooCodeEventName's where the
// reference has one.
type EventName string

const (
	EventMessage         EventName = "message"
	EventStateChange     EventName = "stateChange"
	EventWaitingForInput EventName = "waitingForInput"
	EventTaskStarted     EventName = "taskStarted"
	EventModeSwitched    EventName = "taskModeSwitched"
	EventCompleted       EventName = "taskCompleted"
	EventAborted         EventName = "taskAborted"
	EventToolFailed      EventName = "taskToolFailed"
	EventTokenUsage      EventName = "taskTokenUsageUpdated"
	EventAskResponded    EventName = "taskAskResponded"
	EventSpawned         EventName = "taskSpawned"
	// EventCommandStatus carries a running command's status (Roo Code
	// posts it to its webview as commandExecutionStatus; it is no task
	// event of the IPC protocol).
	EventCommandStatus EventName = "commandExecutionStatus"
)

// Event is something that happened to a task.
type Event struct {
	Name    EventName  `json:"eventName"`
	TaskID  string     `json:"taskId"`
	Message *Message   `json:"message,omitempty"`
	State   AgentState `json:"state"`
	Mode    string     `json:"mode,omitempty"`
	// Tool and Error are set for taskToolFailed.
	Tool  string `json:"tool,omitempty"`
	Error string `json:"error,omitempty"`
	// CommandStatus is set for commandExecutionStatus.
	CommandStatus *tools.CommandExecutionStatus `json:"commandExecutionStatus,omitempty"`
	TokenUsage    *TokenUsage                   `json:"tokenUsage,omitempty"`
	ToolUsage     ToolUsage                     `json:"toolUsage,omitempty"`
	ChildID       string                        `json:"childId,omitempty"`
}

// Outcome is how a run ended.
type Outcome string

const (
	Completed Outcome = "completed"
	Failed    Outcome = "failed"    // the person ended it at an idle ask
	Cancelled Outcome = "cancelled" // the context ended
)

// ErrNotAsking is returned by Respond when the task waits on no ask.
var ErrNotAsking = errors.New("the task is not waiting for an answer")

// Task is one conversation with a model: its history, its message stream and
// the loop that drives them.
type Task struct {
	opts Options
	id   string
	text string

	mu       sync.Mutex
	messages []Message
	history  []provider.Message
	state    AgentState
	asking   bool
	child    *Task
	lastTS   int64

	answers   chan Answer
	mode      string
	mistakes  int
	requests  int
	usage     TokenUsage
	tools     ToolUsage
	completed bool
	created   time.Time
	lastCall  string
	repeats   int
	resumed   bool

	// The commands of the task (livecmd.go): the one its call waits for,
	// the answer channel of its pending command_output ask, and those the
	// person let keep running. Guarded by mu.
	fg *tools.LiveCommand
	nb chan Answer
	bg []*tools.LiveCommand

	// wire is the provider's encoding of the history; tools4 the tool
	// definitions per mode.
	wire   provider.Cache
	tools4 map[string][]provider.Tool
	stored storeCache
}

// New starts a task with text. The id is the governance session id of every
// call the task makes.
func New(text string, o Options) *Task {
	t := newTask(o)
	t.id = uuid.Must(uuid.NewV7()).String()
	t.text = text
	return t
}

// Resume loads stored task id to continue it.
func Resume(id string, o Options) (*Task, error) {
	if o.Store == nil {
		return nil, errors.New("resume needs a task store")
	}
	meta, msgs, hist, err := o.Store.Load(id)
	if err != nil {
		return nil, err
	}
	if o.Mode == "" {
		o.Mode = meta.Mode
	}
	t := newTask(o)
	t.id, t.text, t.messages, t.history = id, meta.Task, msgs, hist
	t.created, t.usage, t.tools, t.completed = meta.Created, meta.TokenUsage, meta.ToolUsage, meta.Completed
	t.mode = meta.Mode
	if t.tools == nil {
		t.tools = ToolUsage{}
	}
	t.resumed = true
	// A message left partial by a kill is finished as it stands.
	for i := range t.messages {
		if t.messages[i].IsPartial() {
			t.messages[i].Partial = nil
		}
		t.lastTS = max(t.lastTS, t.messages[i].TS)
	}
	return t, nil
}

func newTask(o Options) *Task {
	if o.MaxMistakes <= 0 {
		o.MaxMistakes = 3
	}
	if o.Retries <= 0 {
		o.Retries = 3
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FollowupTimeout <= 0 {
		o.FollowupTimeout = time.Minute
	}
	if o.Mode == "" {
		o.Mode = "code"
	}
	if o.CommandAskDelay <= 0 {
		o.CommandAskDelay = 2 * time.Second
	}
	return &Task{opts: o, mode: o.Mode, answers: make(chan Answer, 1), tools: ToolUsage{}, created: o.Now().UTC()}
}

// ID is the task id, also its governance session id.
func (t *Task) ID() string { return t.id }

// Mode is the task's current mode.
func (t *Task) Mode() string { return t.mode }

// Messages returns a copy of the message stream.
func (t *Task) Messages() []Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Message(nil), t.messages...)
}

// History returns a copy of the API conversation history.
func (t *Task) History() []provider.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]provider.Message(nil), t.history...)
}

// State is DetectAgentState of the messages.
func (t *Task) State() AgentState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return DetectAgentState(t.messages)
}

// TokenUsage and ToolUsage are the totals so far.
func (t *Task) TokenUsage() TokenUsage { return t.usage }
func (t *Task) ToolUsage() ToolUsage   { return t.tools }

// Respond answers the ask the task (or its running subtask) waits on.
func (t *Task) Respond(a Answer) error {
	t.mu.Lock()
	child, asking := t.child, t.asking
	t.mu.Unlock()
	if child != nil {
		return child.Respond(a)
	}
	switch a.Response {
	case YesButtonClicked, NoButtonClicked, MessageResponse:
	default:
		return fmt.Errorf("askResponse %q: use yesButtonClicked, noButtonClicked or messageResponse", a.Response)
	}
	if !asking {
		// A running command's command_output ask does not stop the
		// task; it is answered while it is the latest message.
		t.mu.Lock()
		nb := t.nb
		t.mu.Unlock()
		if nb == nil {
			return ErrNotAsking
		}
		select {
		case nb <- a:
			return nil
		default:
			return errors.New("the ask already has an answer")
		}
	}
	select {
	case t.answers <- a:
		return nil
	default:
		return errors.New("the ask already has an answer")
	}
}

func (t *Task) emit(e Event) {
	if t.opts.OnEvent == nil {
		return
	}
	e.TaskID = t.id
	t.opts.OnEvent(e)
}

func (t *Task) ts() int64 {
	// A command's command_output ask is added from its own goroutine.
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := t.opts.Now().UnixMilli()
	if ts <= t.lastTS {
		ts = t.lastTS + 1
	}
	t.lastTS = ts
	return ts
}

// add appends a message (or replaces the last one when it is the partial
// message with the same ts) and tells listeners. State changes are derived,
// never set.
func (t *Task) add(m Message) {
	t.mu.Lock()
	n := len(t.messages)
	if n > 0 && t.messages[n-1].TS == m.TS {
		t.messages[n-1] = m
		t.stored.touch(n - 1)
	} else {
		t.messages = append(t.messages, m)
	}
	prev := t.state
	t.state = DetectAgentState(t.messages)
	st := t.state
	t.mu.Unlock()
	// Stored before anyone is told: what a listener saw survives a kill.
	if !m.IsPartial() {
		t.save()
	}
	mc := m
	t.emit(Event{Name: EventMessage, Message: &mc, State: st})
	if st != prev {
		t.emit(Event{Name: EventStateChange, State: st})
	}
}

// update replaces the message with ts (an api_req_started gaining its cost).
func (t *Task) update(ts int64, text string) {
	t.mu.Lock()
	var m Message
	for i := len(t.messages) - 1; i >= 0; i-- {
		if t.messages[i].TS == ts {
			t.messages[i].Text = text
			t.stored.touch(i)
			m = t.messages[i]
			break
		}
	}
	prev := t.state
	t.state = DetectAgentState(t.messages)
	st := t.state
	t.mu.Unlock()
	t.save()
	t.emit(Event{Name: EventMessage, Message: &m, State: st})
	if st != prev {
		t.emit(Event{Name: EventStateChange, State: st})
	}
}

func (t *Task) say(kind Say, text string) int64 {
	ts := t.ts()
	t.add(Message{TS: ts, Type: TypeSay, Say: kind, Text: text})
	return ts
}

// ask shows an ask and waits for its answer.
func (t *Task) ask(ctx context.Context, kind Ask, text string) (Answer, error) {
	t.mu.Lock()
	t.asking = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.asking = false
		t.mu.Unlock()
	}()
	t.add(Message{TS: t.ts(), Type: TypeAsk, Ask: kind, Text: text})
	t.emit(Event{Name: EventWaitingForInput, State: t.State()})
	select {
	case a := <-t.answers:
		t.emit(Event{Name: EventAskResponded, State: t.State()})
		return a, nil
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// storeCache keeps the stored encoding of each message and history entry,
// so that a save encodes only what changed.
type storeCache struct {
	msgs      [][]byte
	dirty     int // the first message changed since the last save
	hist      [][]byte
	histFirst []*provider.Block // identity of each encoded history entry
	histLen   []int
	histSaved bool   // the history file holds the current history
	meta      []byte // the metadata last saved, without its Updated time
}

// touch notes that message i changed.
func (c *storeCache) touch(i int) { c.dirty = min(c.dirty, i) }

// encode brings the cache up to date with msgs and hist; it reports
// whether the history changed.
func (c *storeCache) encode(msgs []Message, hist []provider.Message) (histChanged bool) {
	if c.dirty < len(c.msgs) {
		c.msgs = c.msgs[:c.dirty]
	}
	for i := len(c.msgs); i < len(msgs); i++ {
		b, _ := json.Marshal(msgs[i])
		c.msgs = append(c.msgs, b)
	}
	c.msgs = c.msgs[:len(msgs)]
	c.dirty = len(msgs)
	keep := 0
	for keep < len(hist) && keep < len(c.hist) {
		m := &hist[keep]
		if len(m.Content) == 0 || c.histFirst[keep] != &m.Content[0] || c.histLen[keep] != len(m.Content) {
			break
		}
		keep++
	}
	if keep == len(hist) && keep == len(c.hist) && c.histSaved {
		return false
	}
	c.hist, c.histFirst, c.histLen = c.hist[:keep], c.histFirst[:keep], c.histLen[:keep]
	for i := keep; i < len(hist); i++ {
		b, _ := json.Marshal(hist[i])
		var first *provider.Block
		if len(hist[i].Content) > 0 {
			first = &hist[i].Content[0]
		}
		c.hist, c.histFirst, c.histLen = append(c.hist, b), append(c.histFirst, first), append(c.histLen, len(hist[i].Content))
	}
	return true
}

func (t *Task) save() {
	if t.opts.Store == nil || t.id == "" {
		return
	}
	t.mu.Lock()
	// Only what changed is encoded; history entries never change once
	// appended, so their identity says whether they are the encoded ones.
	histChanged := t.stored.encode(t.messages, t.history)
	msgs := t.stored.msgs[:len(t.stored.msgs):len(t.stored.msgs)]
	hist := t.stored.hist[:len(t.stored.hist):len(t.stored.hist)]
	meta := &Metadata{ID: t.id, ParentID: t.opts.ParentID, Task: t.text, Mode: t.mode,
		Provider: t.protocol(), Model: t.opts.Model, Created: t.created,
		State: t.state, Completed: t.completed, Mistakes: t.mistakes, TokenUsage: t.usage, ToolUsage: t.tools}
	t.mu.Unlock()
	// A failed save is reported in the stream; the task goes on, since the
	// workspace and the ledger already hold what happened.
	var errs []error
	if histChanged {
		err := t.opts.Store.saveArray(t.id, historyFile, hist)
		errs = append(errs, err)
		t.mu.Lock()
		t.stored.histSaved = err == nil
		t.mu.Unlock()
	}
	errs = append(errs, t.opts.Store.saveArray(t.id, messagesFile, msgs))
	// The metadata is written when more than its Updated time changed.
	key, _ := json.Marshal(meta)
	if !bytes.Equal(key, t.stored.meta) {
		meta.Updated = t.opts.Now().UTC()
		err := t.opts.Store.SaveMetadata(meta)
		if errs = append(errs, err); err == nil {
			t.stored.meta = key
		}
	}
	if err := errors.Join(errs...); err != nil && t.opts.OnEvent != nil {
		t.emit(Event{Name: EventToolFailed, Tool: "task_store", Error: "saving the task failed: " + err.Error()})
	}
}

func (t *Task) protocol() string {
	if t.opts.Provider == nil {
		return ""
	}
	return t.opts.Provider.Protocol()
}

func (t *Task) appendHistory(m provider.Message) {
	t.mu.Lock()
	t.history = append(t.history, m)
	t.mu.Unlock()
}

// Result is how a run ended.
type Result struct {
	TaskID     string     `json:"taskId"`
	Outcome    Outcome    `json:"outcome"`
	State      AgentState `json:"state"`
	Messages   []Message  `json:"messages"`
	TokenUsage TokenUsage `json:"tokenUsage"`
	// ToolUsage counts the reference's tools (toolUsageSchema);
	// GovernanceToolUsage intentgate's own, such as select_active_intent.
	ToolUsage           ToolUsage `json:"toolUsage"`
	GovernanceToolUsage ToolUsage `json:"governanceToolUsage,omitempty"`
	// Completion is the result the model presented and the person accepted.
	Completion string `json:"completion,omitempty"`
}

func (t *Task) result(o Outcome, completion string) *Result {
	roo, own := t.tools.Split()
	if len(own) == 0 {
		own = nil
	}
	return &Result{TaskID: t.id, Outcome: o, State: t.State(), Messages: t.Messages(),
		TokenUsage: t.usage, ToolUsage: roo, GovernanceToolUsage: own, Completion: completion}
}

// Run drives the task until the person accepts a completion, ends it at an
// idle ask, or ctx ends (the task stays resumable).
func (t *Task) Run(ctx context.Context) (*Result, error) {
	if t.opts.Provider == nil || t.opts.Runtime == nil {
		return nil, errors.New("agent: a task needs a provider and a runtime")
	}
	var content []provider.Block
	if t.resumed {
		c, done, err := t.resume(ctx)
		if err != nil || done != "" {
			if err != nil && ctx.Err() != nil {
				return t.result(Cancelled, ""), nil
			}
			if err != nil {
				return nil, err
			}
			return t.result(done, ""), nil
		}
		content = c
	} else {
		t.emit(Event{Name: EventTaskStarted, State: t.State(), Mode: t.mode})
		t.say(SayText, t.text)
		content = []provider.Block{
			{Type: provider.Text, Text: "<task>\n" + t.text + "\n</task>"},
		}
	}
	out, completion, err := t.loop(ctx, content)
	// The commands left running end with the task, and are judged.
	t.endCommands()
	if err != nil {
		return nil, err
	}
	if out != Completed {
		// taskCompleted went out when the result was presented.
		t.emit(Event{Name: EventAborted, State: t.State()})
	}
	return t.result(out, completion), nil
}

// resume asks whether to go on and builds the next user message from what
// the interrupted history lacks.
func (t *Task) resume(ctx context.Context) ([]provider.Block, Outcome, error) {
	kind := AskResumeTask
	if t.completed {
		kind = AskResumeCompletedTask
	}
	a, err := t.ask(ctx, kind, "")
	if err != nil {
		return nil, "", err
	}
	if a.Response == NoButtonClicked {
		return nil, Failed, nil
	}
	t.completed = false
	var content []provider.Block
	t.mu.Lock()
	if n := len(t.history); n > 0 && t.history[n-1].Role == provider.User {
		// The request for this message never got its answer: send its
		// blocks again, without the old environment details.
		for _, b := range t.history[n-1].Content {
			if b.Type != provider.Text || !strings.HasPrefix(b.Text, "<environment_details>") {
				content = append(content, b)
			}
		}
		t.history = t.history[:n-1]
	} else if n > 0 {
		// Tool calls the interruption left without a result get one.
		for _, b := range t.history[n-1].Content {
			if b.Type == provider.ToolUse {
				content = append(content, provider.Block{Type: provider.ToolResult, ToolUseID: b.ID, IsError: true,
					Content: "The task was interrupted before this tool call ran; it did not run. Call it again if it is still needed."})
			}
		}
	}
	t.mu.Unlock()
	note := "[TASK RESUMPTION] This task was interrupted. It may or may not be complete, so reassess the task context. " +
		"The workspace may have changed since; read files again before changing them."
	if a.Response == MessageResponse && a.Text != "" {
		t.say(SayUserFeedback, a.Text)
		note += "\n\nNew instructions for task continuation:\n<user_message>\n" + a.Text + "\n</user_message>"
	}
	content = append(content, provider.Block{Type: provider.Text, Text: note})
	return content, "", nil
}

// noToolsUsed is what a reply without a tool call is answered with.
const noToolsUsed = "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.\n\n" +
	"# Reminder: Instructions for Tool Use\n\nEvery reply must call exactly one tool through function calling. " +
	"When the task is done, call attempt_completion; when you need information from the user, call ask_followup_question.\n\n" +
	"# Next Steps\n\nIf you have completed the user's task, use the attempt_completion tool. " +
	"If you require additional information from the user, use the ask_followup_question tool. " +
	"Otherwise, if you have not completed the task and do not need additional information, then proceed with the next step of the task. " +
	"(This is an automated message, so do not respond to it conversationally.)"

func (t *Task) loop(ctx context.Context, content []provider.Block) (Outcome, string, error) {
	first := !t.resumed
	for {
		if ctx.Err() != nil {
			return Cancelled, "", nil
		}
		if t.mistakes >= t.opts.MaxMistakes {
			a, err := t.ask(ctx, AskMistakeLimitReached, "This may indicate a failure in the model's thought process or inability to use a tool properly, which can be mitigated with some user guidance (e.g. \"Try breaking down the task into smaller steps\").")
			if err != nil {
				return Cancelled, "", nil
			}
			if a.Response == NoButtonClicked {
				return Failed, "", nil
			}
			if a.Response == MessageResponse && a.Text != "" {
				t.say(SayUserFeedback, a.Text)
				content = append(content, provider.Block{Type: provider.Text,
					Text: "You seem to be having trouble proceeding. The user has provided the following feedback to help guide you:\n<feedback>\n" + a.Text + "\n</feedback>"})
			}
			t.mistakes = 0
		}
		if max := t.opts.AutoApprove.MaxRequests; max > 0 && t.requests >= max {
			a, err := t.ask(ctx, AskAutoApprovalMaxReqReached, mustJSON(map[string]int{"count": t.requests}))
			if err != nil {
				return Cancelled, "", nil
			}
			if a.Response == NoButtonClicked {
				return Failed, "", nil
			}
			t.requests = 0
		}
		t.manageContext(ctx)
		content = append(content, provider.Block{Type: provider.Text, Text: t.environmentDetails(first)})
		first = false
		t.appendHistory(provider.Message{Role: provider.User, Content: content})
		reply, out, err := t.request(ctx, content)
		if err != nil || out != "" {
			return out, "", err
		}
		t.requests++
		t.appendHistory(provider.Message{Role: provider.Assistant, Content: reply.Content})
		t.save()
		var uses []provider.Block
		for _, b := range reply.Content {
			if b.Type == provider.ToolUse {
				uses = append(uses, b)
			}
		}
		if len(uses) == 0 {
			t.mistakes++
			t.say(SayError, "The model answered without calling a tool; it is asked to retry with one.")
			content = []provider.Block{{Type: provider.Text, Text: noToolsUsed}}
			continue
		}
		p := &presenter{t: t}
		results, done, completion, err := p.present(ctx, uses)
		if err != nil {
			if ctx.Err() != nil {
				return Cancelled, "", nil
			}
			return "", "", err
		}
		if done != "" {
			// The last tool_use still needs its result, for a resume.
			t.appendHistory(provider.Message{Role: provider.User, Content: results})
			t.save()
			return done, completion, nil
		}
		content = results
	}
}
