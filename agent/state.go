package agent

import "encoding/json"

// State is where a task stands, as a person watching it would put it.
type State string

const (
	StateNoTask          State = "NO_TASK"
	StateRunning         State = "RUNNING"
	StateStreaming       State = "STREAMING"
	StateWaitingForInput State = "WAITING_FOR_INPUT"
	StateIdle            State = "IDLE"
	StateResumable       State = "RESUMABLE"
)

// AgentState is a task's state with the ask it waits on, if any.
type AgentState struct {
	State State `json:"state"`
	// Ask is the pending ask in WAITING_FOR_INPUT, IDLE and RESUMABLE.
	Ask Ask `json:"ask,omitempty"`
}

// DetectAgentState derives the state from the message list alone. The
// messages are the single source of truth: the state is never stored, so it
// cannot disagree with what was shown.
func DetectAgentState(msgs []Message) AgentState {
	if len(msgs) == 0 {
		return AgentState{State: StateNoTask}
	}
	last := msgs[len(msgs)-1]
	if last.IsPartial() {
		return AgentState{State: StateStreaming}
	}
	if last.Type == TypeAsk {
		switch {
		case IsResumableAsk(last.Ask):
			return AgentState{State: StateResumable, Ask: last.Ask}
		case IsIdleAsk(last.Ask):
			return AgentState{State: StateIdle, Ask: last.Ask}
		case IsNonBlockingAsk(last.Ask):
			return AgentState{State: StateRunning, Ask: last.Ask}
		default:
			// Interactive asks and followup: someone must answer.
			return AgentState{State: StateWaitingForInput, Ask: last.Ask}
		}
	}
	// A request counts as streaming until its api_req_started carries a
	// cost or a cancel reason.
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Type == TypeSay && m.Say == SayAPIReqStarted {
			var info APIReqInfo
			if json.Unmarshal([]byte(m.Text), &info) == nil && info.Cost == nil && info.CancelReason == "" {
				return AgentState{State: StateStreaming}
			}
			break
		}
	}
	return AgentState{State: StateRunning}
}
