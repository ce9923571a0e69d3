package agent

import "testing"

func TestDetectAgentState(t *testing.T) {
	yes := true
	say := func(s Say, text string) Message { return Message{TS: 1, Type: TypeSay, Say: s, Text: text} }
	ask := func(a Ask) Message { return Message{TS: 2, Type: TypeAsk, Ask: a} }
	started := say(SayAPIReqStarted, `{"request":"x"}`)
	finished := say(SayAPIReqStarted, `{"request":"x","tokensIn":1,"tokensOut":1,"cost":0}`)
	cancelled := say(SayAPIReqStarted, `{"request":"x","cancelReason":"user_cancelled"}`)
	for _, tc := range []struct {
		name string
		msgs []Message
		want AgentState
	}{
		{"empty", nil, AgentState{State: StateNoTask}},
		{"task text", []Message{say(SayText, "do it")}, AgentState{State: StateRunning}},
		{"request without cost", []Message{say(SayText, "t"), started}, AgentState{State: StateStreaming}},
		{"text after request without cost", []Message{started, say(SayText, "hi")}, AgentState{State: StateStreaming}},
		{"partial", []Message{finished, {TS: 3, Type: TypeSay, Say: SayText, Partial: &yes}}, AgentState{State: StateStreaming}},
		{"request with cost", []Message{started, finished}, AgentState{State: StateRunning}},
		{"cancelled request", []Message{cancelled}, AgentState{State: StateRunning}},
		{"tool ask", []Message{finished, ask(AskTool)}, AgentState{State: StateWaitingForInput, Ask: AskTool}},
		{"command ask", []Message{finished, ask(AskCommand)}, AgentState{State: StateWaitingForInput, Ask: AskCommand}},
		{"followup", []Message{finished, ask(AskFollowup)}, AgentState{State: StateWaitingForInput, Ask: AskFollowup}},
		{"completion", []Message{finished, ask(AskCompletionResult)}, AgentState{State: StateIdle, Ask: AskCompletionResult}},
		{"mistakes", []Message{ask(AskMistakeLimitReached)}, AgentState{State: StateIdle, Ask: AskMistakeLimitReached}},
		{"api failed", []Message{ask(AskAPIReqFailed)}, AgentState{State: StateIdle, Ask: AskAPIReqFailed}},
		{"resume", []Message{finished, ask(AskResumeTask)}, AgentState{State: StateResumable, Ask: AskResumeTask}},
		{"resume completed", []Message{ask(AskResumeCompletedTask)}, AgentState{State: StateIdle, Ask: AskResumeCompletedTask}},
		{"command output", []Message{ask(AskCommandOutput)}, AgentState{State: StateRunning, Ask: AskCommandOutput}},
		{"partial ask", []Message{{TS: 2, Type: TypeAsk, Ask: AskTool, Partial: &yes}}, AgentState{State: StateStreaming}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectAgentState(tc.msgs); got != tc.want {
				t.Errorf("DetectAgentState = %+v, want %+v", got, tc.want)
			}
		})
	}
}
