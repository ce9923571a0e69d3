package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// cursor is Cursor's hook protocol (cursor.com/docs/agent/hooks).
//
// Input: conversation_id, generation_id, model, hook_event_name,
// workspace_roots and the event's own fields: beforeShellExecution and
// afterShellExecution {command, cwd, output}, beforeMCPExecution {tool_name,
// tool_input (a JSON string), url | command}, beforeReadFile {file_path,
// content}, afterFileEdit {file_path, edits[{old_string, new_string}]},
// beforeSubmitPrompt {prompt}, preToolUse {tool_name, tool_input}.
// Output: always one JSON object, {} when nothing applies:
//   - preToolUse, beforeShellExecution, beforeMCPExecution, beforeReadFile:
//     {"permission":"deny","user_message":...,"agent_message":...} refuses
//     ("allow" is never sent: it would bypass the user's own approval).
//   - beforeSubmitPrompt: {"continue":true}.
//   - sessionStart: {"additional_context":...}.
//   - afterShellExecution and afterFileEdit have no output fields: what they
//     report is recorded, and cannot be told to the model.
type cursor struct{}

func (cursor) Name() string { return "cursor" }

type cursorIn struct {
	ConversationID string          `json:"conversation_id"`
	SessionID      string          `json:"session_id"`
	Event          string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	Roots          []string        `json:"workspace_roots"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	Command        *string         `json:"command"`
	URL            string          `json:"url"`
	FilePath       *string         `json:"file_path"`
	Content        *string         `json:"content"`
	Edits          []struct {
		Old string `json:"old_string"`
		New string `json:"new_string"`
	} `json:"edits"`
	Prompt string `json:"prompt"`
}

func cursorKind(name string) Kind {
	switch name {
	case "preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile":
		return PreTool
	case "afterShellExecution", "afterMCPExecution", "afterFileEdit":
		return PostTool
	case "sessionStart":
		return SessionStart
	case "beforeSubmitPrompt":
		return Prompt
	case "stop", "sessionEnd":
		return Stop
	}
	return Unknown
}

func (cursor) Parse(raw []byte) (*Event, error) {
	ev := &Event{Agent: "cursor"}
	var in cursorIn
	if err := json.Unmarshal(raw, &in); err != nil {
		var name struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(raw, &name) == nil {
			ev.Name, ev.Kind = name.Event, cursorKind(name.Event)
		}
		return ev, fmt.Errorf("the event is not a valid hook payload: %w", err)
	}
	ev.Name, ev.Kind = in.Event, cursorKind(in.Event)
	ev.Session = in.ConversationID
	if ev.Session == "" {
		ev.Session = in.SessionID
	}
	ev.Cwd, ev.Model, ev.CallID = in.Cwd, in.Model, in.ToolUseID
	if ev.Cwd == "" && len(in.Roots) > 0 {
		ev.Cwd = in.Roots[0]
	}
	if in.Event == "" {
		return ev, errors.New(`the event has no "hook_event_name"`)
	}
	switch in.Event {
	case "beforeShellExecution", "afterShellExecution":
		if in.Command == nil {
			return ev, fmt.Errorf(`the %s event has no "command"`, in.Event)
		}
		// The two events share only the command: it keys the call.
		ev.Tool, ev.CallID = "Shell", ""
		ev.Input, _ = json.Marshal(map[string]string{"command": *in.Command})
		ev.Ops = []Op{{Kind: OpCommand, Command: *in.Command}}
	case "beforeMCPExecution", "afterMCPExecution":
		if in.ToolName == "" {
			return ev, fmt.Errorf(`the %s event has no "tool_name"`, in.Event)
		}
		args := in.ToolInput
		var s string
		if json.Unmarshal(in.ToolInput, &s) == nil {
			args = json.RawMessage(s) // tool_input is documented as a JSON string
			if !json.Valid(args) {
				args, _ = json.Marshal(s)
			}
		}
		server, name, ok := mcpName(in.ToolName)
		if !ok {
			server, name = "", in.ToolName
			if in.Command != nil && strings.Contains(*in.Command, "intentgate") {
				server = IntentgateServer
			}
		}
		if server == "" && name == "select_active_intent" {
			server = IntentgateServer
		}
		ev.Tool, ev.Input = in.ToolName, args
		ev.Ops = []Op{mcpOp(server, name, args)}
	case "beforeReadFile":
		if in.FilePath == nil || *in.FilePath == "" {
			return ev, errors.New(`the beforeReadFile event has no "file_path"`)
		}
		op := Op{Kind: OpRead, Path: *in.FilePath}
		if in.Content != nil {
			// What the agent is about to be shown: the hash lock's baseline.
			op.Shown, op.HasShown = []byte(*in.Content), true
		}
		ev.Tool, ev.Ops = "Read", []Op{op}
	case "afterFileEdit":
		if in.FilePath == nil || *in.FilePath == "" {
			return ev, errors.New(`the afterFileEdit event has no "file_path"`)
		}
		op := Op{Kind: OpEdit, Path: *in.FilePath}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Replacement{Old: e.Old, New: e.New})
		}
		ev.Tool, ev.Ops = "Edit", []Op{op}
	case "preToolUse":
		if in.ToolName == "" {
			return ev, errors.New(`the preToolUse event has no "tool_name"`)
		}
		ev.Tool, ev.Input = in.ToolName, in.ToolInput
		ops, err := cursorToolOps(in.ToolName, in.ToolInput)
		if err != nil {
			return ev, err
		}
		ev.Ops = ops
	case "beforeSubmitPrompt":
		ev.Prompt = in.Prompt
	}
	return ev, nil
}

// cursorToolOps maps the file tools seen by the generic preToolUse event.
// Shell, Read and MCP calls are answered by their dedicated events, so here
// they have no ops, lest one call be judged twice.
func cursorToolOps(tool string, input json.RawMessage) ([]Op, error) {
	m, err := object(input, "tool_input")
	if err != nil {
		return nil, err
	}
	paths := []string{"file_path", "path", "target_file"}
	switch tool {
	case "Write":
		p, err := requirePath(m, tool, paths...)
		if err != nil {
			return nil, err
		}
		content, has, err := firstStr(m, "content", "contents")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		return []Op{{Kind: OpWrite, Path: p, Content: content, HasContent: has}}, nil
	case "Edit", "StrReplace", "MultiEdit", "search_replace", "edit_file":
		p, err := requirePath(m, tool, paths...)
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpEdit, Path: p}}, nil
	case "Delete", "delete_file":
		p, err := requirePath(m, tool, paths...)
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpDelete, Path: p}}, nil
	}
	return nil, nil
}

type cursorOut struct {
	Permission        string `json:"permission,omitempty"`
	UserMessage       string `json:"user_message,omitempty"`
	AgentMessage      string `json:"agent_message,omitempty"`
	Continue          *bool  `json:"continue,omitempty"`
	AdditionalContext string `json:"additional_context,omitempty"`
}

func (cursor) Render(ev *Event, r Reply) []byte {
	var out cursorOut
	switch {
	case r.Deny != "" && (ev.Kind == PreTool || ev.Kind == Unknown):
		msg := r.Message
		if msg == "" {
			msg = "intentgate refused the call"
		}
		out = cursorOut{Permission: "deny", UserMessage: msg, AgentMessage: r.Deny}
	case ev.Name == "beforeSubmitPrompt":
		yes := true
		out.Continue = &yes
	case ev.Name == "sessionStart":
		out.AdditionalContext = r.Context
	}
	return marshal(out)
}
