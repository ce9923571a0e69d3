// Package agent is intentgate's own Roo Code-style agent: a Task converses
// with a model, presents each tool call the model makes to the governed
// runtime and to the person, and records everything as a stream of
// ClineMessages from which the agent's state is derived.
//
// Names and shapes follow the npm package @roo-code/types version 1.63.0;
// testdata/conformance checks them against that package's own schemas.
package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Type says whether a message asks the person something or tells them.
type Type string

const (
	TypeAsk Type = "ask"
	TypeSay Type = "say"
)

// Ask is what an ask message waits for (clineAsks).
type Ask string

const (
	AskFollowup                  Ask = "followup"
	AskCommand                   Ask = "command"
	AskCommandOutput             Ask = "command_output"
	AskCompletionResult          Ask = "completion_result"
	AskTool                      Ask = "tool"
	AskAPIReqFailed              Ask = "api_req_failed"
	AskResumeTask                Ask = "resume_task"
	AskResumeCompletedTask       Ask = "resume_completed_task"
	AskMistakeLimitReached       Ask = "mistake_limit_reached"
	AskBrowserActionLaunch       Ask = "browser_action_launch"
	AskUseMCPServer              Ask = "use_mcp_server"
	AskAutoApprovalMaxReqReached Ask = "auto_approval_max_req_reached"
)

// Say is what a say message reports (clineSays).
type Say string

const (
	SayError                   Say = "error"
	SayAPIReqStarted           Say = "api_req_started"
	SayAPIReqFinished          Say = "api_req_finished"
	SayAPIReqRetried           Say = "api_req_retried"
	SayAPIReqRetryDelayed      Say = "api_req_retry_delayed"
	SayAPIReqDeleted           Say = "api_req_deleted"
	SayText                    Say = "text"
	SayReasoning               Say = "reasoning"
	SayCompletionResult        Say = "completion_result"
	SayUserFeedback            Say = "user_feedback"
	SayUserFeedbackDiff        Say = "user_feedback_diff"
	SayCommandOutput           Say = "command_output"
	SayShellIntegrationWarning Say = "shell_integration_warning"
	SayBrowserAction           Say = "browser_action"
	SayBrowserActionResult     Say = "browser_action_result"
	SayMCPServerRequestStarted Say = "mcp_server_request_started"
	SayMCPServerResponse       Say = "mcp_server_response"
	SaySubtaskResult           Say = "subtask_result"
	SayCheckpointSaved         Say = "checkpoint_saved"
	SayRooignoreError          Say = "rooignore_error"
	SayDiffError               Say = "diff_error"
	SayCondenseContext         Say = "condense_context"
	SayCondenseContextError    Say = "condense_context_error"
	SayCodebaseSearchResult    Say = "codebase_search_result"
	SayUserEditTodos           Say = "user_edit_todos"
)

// ClineAsks lists every ask, in the package's order.
var ClineAsks = []Ask{AskFollowup, AskCommand, AskCommandOutput, AskCompletionResult, AskTool,
	AskAPIReqFailed, AskResumeTask, AskResumeCompletedTask, AskMistakeLimitReached,
	AskBrowserActionLaunch, AskUseMCPServer, AskAutoApprovalMaxReqReached}

// ClineSays lists every say, in the package's order.
var ClineSays = []Say{SayError, SayAPIReqStarted, SayAPIReqFinished, SayAPIReqRetried,
	SayAPIReqRetryDelayed, SayAPIReqDeleted, SayText, SayReasoning, SayCompletionResult,
	SayUserFeedback, SayUserFeedbackDiff, SayCommandOutput, SayShellIntegrationWarning,
	SayBrowserAction, SayBrowserActionResult, SayMCPServerRequestStarted, SayMCPServerResponse,
	SaySubtaskResult, SayCheckpointSaved, SayRooignoreError, SayDiffError, SayCondenseContext,
	SayCondenseContextError, SayCodebaseSearchResult, SayUserEditTodos}

// The ask categories of the package: an idle ask means the task has stopped
// until someone starts it again, an interactive ask needs a decision on a
// tool call, a resumable ask offers to continue a paused task.
var (
	IdleAsks        = []Ask{AskCompletionResult, AskAPIReqFailed, AskResumeCompletedTask, AskMistakeLimitReached, AskAutoApprovalMaxReqReached}
	ResumableAsks   = []Ask{AskResumeTask}
	InteractiveAsks = []Ask{AskCommand, AskTool, AskBrowserActionLaunch, AskUseMCPServer}
	// NonBlockingAsks is not in @roo-code/types 1.63.0; later versions of
	// the package add it with exactly command_output: a running command's
	// output may be answered, but the task does not wait for it.
	NonBlockingAsks = []Ask{AskCommandOutput}
)

func has(list []Ask, a Ask) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// IsIdleAsk, IsInteractiveAsk, IsResumableAsk and IsNonBlockingAsk are the
// package's isIdleAsk and friends.
func IsIdleAsk(a Ask) bool        { return has(IdleAsks, a) }
func IsInteractiveAsk(a Ask) bool { return has(InteractiveAsks, a) }
func IsResumableAsk(a Ask) bool   { return has(ResumableAsks, a) }
func IsNonBlockingAsk(a Ask) bool { return has(NonBlockingAsks, a) }

// Message is a ClineMessage (clineMessageSchema). Text carries a JSON payload
// for some asks and says (SayTool, APIReqInfo, FollowupData, ...).
type Message struct {
	TS      int64    `json:"ts"`
	Type    Type     `json:"type"`
	Ask     Ask      `json:"ask,omitempty"`
	Say     Say      `json:"say,omitempty"`
	Text    string   `json:"text,omitempty"`
	Images  []string `json:"images,omitempty"`
	Partial *bool    `json:"partial,omitempty"`
	// ConversationHistoryIndex is the index of the API history message this
	// message belongs to.
	ConversationHistoryIndex *int             `json:"conversationHistoryIndex,omitempty"`
	ContextCondense          *ContextCondense `json:"contextCondense,omitempty"`
	IsProtected              *bool            `json:"isProtected,omitempty"`
	APIProtocol              string           `json:"apiProtocol,omitempty"`
}

// IsPartial reports whether the message is still being streamed.
func (m Message) IsPartial() bool { return m.Partial != nil && *m.Partial }

// ContextCondense reports a condensed context (contextCondenseSchema).
type ContextCondense struct {
	Cost              float64 `json:"cost"`
	PrevContextTokens int     `json:"prevContextTokens"`
	NewContextTokens  int     `json:"newContextTokens"`
	Summary           string  `json:"summary"`
}

// SayTool is the JSON text of an ask "tool" (ClineSayTool).
type SayTool struct {
	Tool               string `json:"tool"`
	Path               string `json:"path,omitempty"`
	Diff               string `json:"diff,omitempty"`
	Content            string `json:"content,omitempty"`
	Regex              string `json:"regex,omitempty"`
	FilePattern        string `json:"filePattern,omitempty"`
	Mode               string `json:"mode,omitempty"`
	Reason             string `json:"reason,omitempty"`
	IsOutsideWorkspace bool   `json:"isOutsideWorkspace,omitempty"`
	IsProtected        bool   `json:"isProtected,omitempty"`
	Search             string `json:"search,omitempty"`
	Replace            string `json:"replace,omitempty"`
	LineNumber         *int   `json:"lineNumber,omitempty"`
	Query              string `json:"query,omitempty"`
	Question           string `json:"question,omitempty"`
}

// The SayTool.Tool values of ClineSayTool this agent produces.
const (
	ToolEditedExistingFile      = "editedExistingFile"
	ToolAppliedDiff             = "appliedDiff"
	ToolNewFileCreated          = "newFileCreated"
	ToolReadFile                = "readFile"
	ToolListFilesTopLevel       = "listFilesTopLevel"
	ToolListFilesRecursive      = "listFilesRecursive"
	ToolListCodeDefinitionNames = "listCodeDefinitionNames"
	ToolSearchFiles             = "searchFiles"
	ToolSwitchMode              = "switchMode"
	ToolNewTask                 = "newTask"
	ToolFinishTask              = "finishTask"
	ToolSearchAndReplace        = "searchAndReplace"
	ToolInsertContent           = "insertContent"
	ToolUpdateTodoList          = "updateTodoList"
)

// APIReqInfo is the JSON text of a say "api_req_started" (ClineApiReqInfo).
// Cost stays nil while the request streams: that is how a reader tells a
// running request from a finished one.
type APIReqInfo struct {
	Request                string   `json:"request,omitempty"`
	TokensIn               *int     `json:"tokensIn,omitempty"`
	TokensOut              *int     `json:"tokensOut,omitempty"`
	CacheWrites            *int     `json:"cacheWrites,omitempty"`
	CacheReads             *int     `json:"cacheReads,omitempty"`
	Cost                   *float64 `json:"cost,omitempty"`
	CancelReason           string   `json:"cancelReason,omitempty"` // streaming_failed or user_cancelled
	StreamingFailedMessage string   `json:"streamingFailedMessage,omitempty"`
	APIProtocol            string   `json:"apiProtocol,omitempty"`
}

// FollowupData is the JSON text of an ask "followup".
type FollowupData struct {
	Question string           `json:"question,omitempty"`
	Suggest  []SuggestionItem `json:"suggest,omitempty"`
}

// SuggestionItem is one suggested answer to a follow-up question.
type SuggestionItem struct {
	Answer string `json:"answer"`
	Mode   string `json:"mode,omitempty"`
}

// TaskCreationData is the JSON text of the tool ask of new_task.
type TaskCreationData struct {
	Tool    string `json:"tool"` // newTask
	Mode    string `json:"mode"`
	Content string `json:"content"`
}

// ModeSwitchData is the JSON text of the tool ask of switch_mode.
type ModeSwitchData struct {
	Tool   string `json:"tool"` // switchMode
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
}

// CommandData is the text of an ask "command": the command line itself, as
// in the reference.

// Response is how a person answers an ask (ClineAskResponse).
type Response string

const (
	YesButtonClicked Response = "yesButtonClicked"
	NoButtonClicked  Response = "noButtonClicked"
	MessageResponse  Response = "messageResponse"
)

// Answer is one answer to an ask, as the stdin JSON lines carry it:
// {"type":"askResponse","askResponse":"yesButtonClicked","text":"..."}.
type Answer struct {
	Type     string   `json:"type,omitempty"`
	Response Response `json:"askResponse"`
	Text     string   `json:"text,omitempty"`
	Images   []string `json:"images,omitempty"`
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("agent: " + err.Error())
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// ParseAnswer reads one answer line:
// {"type":"askResponse","askResponse":"yesButtonClicked","text":"..."}.
// Unknown fields, another type or another response are errors, so that a
// typo never approves anything.
func ParseAnswer(line []byte) (Answer, error) {
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Answer{}, fmt.Errorf(`not an answer: %v (want {"type":"askResponse","askResponse":"yesButtonClicked"})`, err)
	}
	if dec.More() {
		return Answer{}, errors.New("not an answer: more than one JSON value on the line")
	}
	if a.Type != "" && a.Type != "askResponse" {
		return Answer{}, fmt.Errorf(`answer type %q: use "askResponse"`, a.Type)
	}
	switch a.Response {
	case YesButtonClicked, NoButtonClicked, MessageResponse:
	default:
		return Answer{}, fmt.Errorf(`askResponse %q: use yesButtonClicked, noButtonClicked or messageResponse`, a.Response)
	}
	return a, nil
}
