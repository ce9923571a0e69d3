package ipc

import "encoding/json"

// EventName is RooCodeEventName of @roo-code/types 1.63.0.
type EventName string

const (
	EventTaskCreated           EventName = "taskCreated"
	EventTaskStarted           EventName = "taskStarted"
	EventTaskCompleted         EventName = "taskCompleted"
	EventTaskAborted           EventName = "taskAborted"
	EventTaskFocused           EventName = "taskFocused"
	EventTaskUnfocused         EventName = "taskUnfocused"
	EventTaskActive            EventName = "taskActive"
	EventTaskInteractive       EventName = "taskInteractive"
	EventTaskResumable         EventName = "taskResumable"
	EventTaskIdle              EventName = "taskIdle"
	EventTaskPaused            EventName = "taskPaused"
	EventTaskUnpaused          EventName = "taskUnpaused"
	EventTaskSpawned           EventName = "taskSpawned"
	EventMessage               EventName = "message"
	EventTaskModeSwitched      EventName = "taskModeSwitched"
	EventTaskAskResponded      EventName = "taskAskResponded"
	EventTaskTokenUsageUpdated EventName = "taskTokenUsageUpdated"
	EventTaskToolFailed        EventName = "taskToolFailed"
	EventEvalPass              EventName = "evalPass"
	EventEvalFail              EventName = "evalFail"
)

// EventNames lists every event name of the package, in its order; a test
// compares it with the package's enum.
var EventNames = []EventName{
	EventTaskCreated, EventTaskStarted, EventTaskCompleted, EventTaskAborted,
	EventTaskFocused, EventTaskUnfocused, EventTaskActive, EventTaskInteractive,
	EventTaskResumable, EventTaskIdle, EventTaskPaused, EventTaskUnpaused,
	EventTaskSpawned, EventMessage, EventTaskModeSwitched, EventTaskAskResponded,
	EventTaskTokenUsageUpdated, EventTaskToolFailed, EventEvalPass, EventEvalFail,
}

// Event is one task event (taskEventSchema). Payload is the event's argument
// tuple, whose first element is the task id for every task event. TaskID is
// the package's optional numeric id of an evaluation run, not the task id;
// intentgate leaves it out.
type Event struct {
	Name    EventName `json:"eventName"`
	Payload []any     `json:"payload"`
	TaskID  *int      `json:"taskId,omitempty"`
}

// Task returns the task id the event is about ("" for evaluation events):
// the first element of the payload, or its taskId for a message event.
func (e Event) Task() string {
	if len(e.Payload) == 0 {
		return ""
	}
	switch p := e.Payload[0].(type) {
	case string:
		return p
	case map[string]any: // a message event, as decoded from JSON
		s, _ := p["taskId"].(string)
		return s
	case map[string]json.RawMessage:
		var s string
		json.Unmarshal(p["taskId"], &s)
		return s
	}
	return ""
}

// TokenUsage is tokenUsageSchema.
type TokenUsage struct {
	TotalTokensIn    int64   `json:"totalTokensIn"`
	TotalTokensOut   int64   `json:"totalTokensOut"`
	TotalCacheWrites *int64  `json:"totalCacheWrites,omitempty"`
	TotalCacheReads  *int64  `json:"totalCacheReads,omitempty"`
	TotalCost        float64 `json:"totalCost"`
	ContextTokens    int64   `json:"contextTokens"`
}

// ToolUsage is toolUsageSchema: attempts and failures per tool name.
type ToolUsage map[string]ToolCount

// ToolCount is one tool's entry in ToolUsage.
type ToolCount struct {
	Attempts int `json:"attempts"`
	Failures int `json:"failures"`
}

// Constructors for the events, each with the payload tuple the package
// declares for it (rooCodeEventsSchema).

func taskEvent(name EventName, id string) Event { return Event{Name: name, Payload: []any{id}} }

func TaskCreated(id string) Event     { return taskEvent(EventTaskCreated, id) }
func TaskStarted(id string) Event     { return taskEvent(EventTaskStarted, id) }
func TaskAborted(id string) Event     { return taskEvent(EventTaskAborted, id) }
func TaskFocused(id string) Event     { return taskEvent(EventTaskFocused, id) }
func TaskUnfocused(id string) Event   { return taskEvent(EventTaskUnfocused, id) }
func TaskActive(id string) Event      { return taskEvent(EventTaskActive, id) }
func TaskInteractive(id string) Event { return taskEvent(EventTaskInteractive, id) }
func TaskResumable(id string) Event   { return taskEvent(EventTaskResumable, id) }
func TaskIdle(id string) Event        { return taskEvent(EventTaskIdle, id) }
func TaskPaused(id string) Event      { return taskEvent(EventTaskPaused, id) }
func TaskUnpaused(id string) Event    { return taskEvent(EventTaskUnpaused, id) }
func TaskAskResponded(id string) Event {
	return taskEvent(EventTaskAskResponded, id)
}

// TaskCompleted carries the task's totals and whether it was a subtask.
func TaskCompleted(id string, usage TokenUsage, tools ToolUsage, isSubtask bool) Event {
	if tools == nil {
		tools = ToolUsage{}
	}
	return Event{Name: EventTaskCompleted, Payload: []any{id, usage, tools, map[string]bool{"isSubtask": isSubtask}}}
}

// TaskSpawned names the parent and the child task.
func TaskSpawned(parent, child string) Event {
	return Event{Name: EventTaskSpawned, Payload: []any{parent, child}}
}

// MessageEvent carries one ClineMessage (clineMessageSchema) as created or
// updated (a partial message streaming).
func MessageEvent(id string, updated bool, msg json.RawMessage) Event {
	action := "created"
	if updated {
		action = "updated"
	}
	return Event{Name: EventMessage, Payload: []any{map[string]any{"taskId": id, "action": action, "message": msg}}}
}

// TaskModeSwitched names the task's new mode.
func TaskModeSwitched(id, mode string) Event {
	return Event{Name: EventTaskModeSwitched, Payload: []any{id, mode}}
}

// TaskToolFailed names the tool and the error.
func TaskToolFailed(id, tool, errText string) Event {
	return Event{Name: EventTaskToolFailed, Payload: []any{id, tool, errText}}
}

// TaskTokenUsageUpdated carries the task's running totals.
func TaskTokenUsageUpdated(id string, usage TokenUsage) Event {
	return Event{Name: EventTaskTokenUsageUpdated, Payload: []any{id, usage}}
}

// ErrorText is the text of an error say, which is how a server answers a
// command it refuses; "" for any other event.
func (ev Event) ErrorText() string {
	if ev.Name != EventMessage || len(ev.Payload) == 0 {
		return ""
	}
	p, _ := ev.Payload[0].(map[string]any)
	msg, _ := p["message"].(map[string]any)
	if msg["type"] == "say" && msg["say"] == "error" {
		s, _ := msg["text"].(string)
		return s
	}
	return ""
}
