package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// claude is Claude Code's hook protocol, and Codex's, which follows it with a
// stricter output schema (code.claude.com/docs/en/hooks;
// developers.openai.com/codex/hooks and codex-rs/hooks/schema/generated).
//
// Input: one JSON object with session_id, cwd, hook_event_name and, for tool
// events, tool_name, tool_input, tool_use_id (and tool_response after).
// Output, exit status 0:
//   - PreToolUse refusal: {"hookSpecificOutput":{"hookEventName":"PreToolUse",
//     "permissionDecision":"deny","permissionDecisionReason":...}}. Allowing
//     prints nothing: "allow" would skip the user's own permission prompts,
//     and Codex rejects "allow" without updatedInput and never takes "ask".
//     A shell command is allowed rewritten: "allow" with updatedInput, the
//     command under intentgate exec (shell.go).
//   - PostToolUse: {"decision":"block","reason":...} puts the reason in front
//     of the model; hookSpecificOutput.additionalContext adds context.
//   - SessionStart, UserPromptSubmit: hookSpecificOutput.additionalContext.
//   - systemMessage: a line for the user (both agents accept it everywhere).
//
// Codex rejects unknown fields and a deny or block without a non-empty
// reason, so nothing else is ever printed.
type claude struct {
	name   string
	strict bool // Codex
}

func (c claude) Name() string { return c.name }

type claudeIn struct {
	SessionID    string          `json:"session_id"`
	Cwd          string          `json:"cwd"`
	Event        string          `json:"hook_event_name"`
	Model        string          `json:"model"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Prompt       string          `json:"prompt"`
}

func (c claude) Parse(raw []byte) (*Event, error) {
	ev := &Event{Agent: c.name}
	var in claudeIn
	if err := json.Unmarshal(raw, &in); err != nil {
		// Learn at least which event it was, to answer in its form.
		var name struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(raw, &name) == nil {
			ev.Name, ev.Kind = name.Event, claudeKind(name.Event)
		}
		return ev, fmt.Errorf("the event is not a valid hook payload: %w", err)
	}
	ev.Name, ev.Kind = in.Event, claudeKind(in.Event)
	ev.Session, ev.Cwd, ev.Model = in.SessionID, in.Cwd, in.Model
	ev.CallID, ev.Tool, ev.Input = in.ToolUseID, in.ToolName, in.ToolInput
	switch ev.Kind {
	case Unknown:
		if in.Event == "" {
			return ev, errors.New(`the event has no "hook_event_name"`)
		}
		return ev, nil
	case Prompt:
		ev.Prompt = in.Prompt
		return ev, nil
	case PreTool, PostTool:
	default:
		return ev, nil
	}
	if in.ToolName == "" {
		return ev, fmt.Errorf(`the %s event has no "tool_name"`, in.Event)
	}
	post := ev.Kind == PostTool
	if post {
		ev.Output = responseOutput(in.ToolResponse)
	}
	var err error
	if c.strict {
		ev.Ops, err = codexOps(in.ToolName, in.ToolInput, in.ToolResponse, post)
	} else {
		ev.Ops, err = claudeOps(in.ToolName, in.ToolInput, in.ToolResponse, post)
	}
	return ev, err
}

func claudeKind(name string) Kind {
	switch name {
	case "PreToolUse":
		return PreTool
	case "PostToolUse":
		return PostTool
	case "SessionStart":
		return SessionStart
	case "UserPromptSubmit":
		return Prompt
	case "Stop", "SubagentStop":
		return Stop
	}
	return Unknown
}

// claudeOps maps Claude Code's tools. Tools that change nothing in the
// workspace (Grep, Glob, WebFetch, Task...) have no ops: intentgate has no
// opinion about them.
func claudeOps(tool string, input, resp json.RawMessage, post bool) ([]Op, error) {
	m, err := object(input, "tool_input")
	if err != nil {
		return nil, err
	}
	var op Op
	switch tool {
	case "Write":
		p, err := requirePath(m, tool, "file_path")
		if err != nil {
			return nil, err
		}
		content, has, err := str(m, "content")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		op = Op{Kind: OpWrite, Path: p, Content: content, HasContent: has}
	case "Edit", "MultiEdit":
		p, err := requirePath(m, tool, "file_path")
		if err != nil {
			return nil, err
		}
		op = Op{Kind: OpEdit, Path: p}
	case "NotebookEdit":
		p, err := requirePath(m, tool, "notebook_path")
		if err != nil {
			return nil, err
		}
		op = Op{Kind: OpEdit, Path: p}
	case "Read":
		p, err := requirePath(m, tool, "file_path")
		if err != nil {
			return nil, err
		}
		op = Op{Kind: OpRead, Path: p, Partial: present(m, "offset") || present(m, "limit")}
		if post {
			claudeShown(&op, resp)
		}
		return []Op{op}, nil
	case "Bash":
		cmd, ok, err := str(m, "command")
		if err != nil || !ok {
			//lint:ignore ST1005 Bash is the tool's name
			return nil, fmt.Errorf(`Bash: the input has no "command" string`)
		}
		return []Op{{Kind: OpCommand, Command: cmd}}, nil
	default:
		if server, name, ok := mcpName(tool); ok {
			return []Op{mcpOp(server, name, input)}, nil
		}
		return nil, nil
	}
	if post {
		claudeBefore(&op, resp)
	}
	return []Op{op}, nil
}

// claudeBefore takes the file's old content from a Write or Edit response:
// "originalFile" is the content before the call, null for a file it created.
func claudeBefore(op *Op, resp json.RawMessage) {
	var r map[string]json.RawMessage
	if json.Unmarshal(resp, &r) != nil {
		return
	}
	raw, ok := r["originalFile"]
	if !ok {
		return
	}
	if string(raw) == "null" {
		op.HasBefore, op.Existed = true, false
		return
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		op.Before, op.HasBefore, op.Existed = []byte(s), true, true
	}
}

// claudeShown takes what a Read showed the model: tool_response.file.content,
// with startLine, numLines and totalLines saying whether it was all of it.
func claudeShown(op *Op, resp json.RawMessage) {
	var r struct {
		Type string `json:"type"`
		File *struct {
			Content    *string `json:"content"`
			StartLine  int     `json:"startLine"`
			NumLines   int     `json:"numLines"`
			TotalLines int     `json:"totalLines"`
		} `json:"file"`
	}
	if json.Unmarshal(resp, &r) != nil || r.File == nil || r.File.Content == nil {
		return
	}
	if r.Type != "" && r.Type != "text" {
		return
	}
	f := r.File
	if f.StartLine > 1 || (f.TotalLines > 0 && f.NumLines < f.TotalLines) {
		op.Partial = true
	}
	op.Shown, op.HasShown = []byte(*f.Content), true
}

type claudeOut struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
}

type claudeSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// claudeRewrite is the PreToolUse answer that runs command in place of the
// shell call's own: the tool's input with "command" replaced, every other
// field kept. updatedInput takes effect with "allow", which skips Claude
// Code's own prompt but not the user's deny and ask rules; the command
// that runs is confined by intentgate exec. Codex takes the same answer for
// its shell tools, whose hook input is {"command": ...} (a script); the
// structured forms newer versions may send ("kind": "argv" or
// "powershell_script") cannot carry a shell command line, so there is no
// rewrite for them and the call is refused.
func (c claude) rewrite(ev *Event, command string) *claudeSpecific {
	if c.strict {
		var in struct {
			Kind *string `json:"kind"`
		}
		if json.Unmarshal(ev.Input, &in) != nil || (in.Kind != nil && *in.Kind != "script") {
			return nil
		}
	}
	in := rewrittenInput(ev.Input, "command", command)
	if in == nil {
		return nil
	}
	return &claudeSpecific{HookEventName: "PreToolUse", PermissionDecision: "allow",
		PermissionDecisionReason: "intentgate runs the command confined to the session's intent",
		UpdatedInput:             in}
}

func (c claude) Render(ev *Event, r Reply) []byte {
	out := claudeOut{SystemMessage: r.Message}
	switch {
	case r.Deny != "" && (ev.Kind == PreTool || ev.Kind == Unknown):
		// An event that could not be read is answered as a refusal: if it
		// was a PreToolUse, the call must not run.
		out = claudeOut{HookSpecificOutput: &claudeSpecific{HookEventName: "PreToolUse",
			PermissionDecision: "deny", PermissionDecisionReason: r.Deny}}
	case r.Command != "" && ev.Kind == PreTool:
		out.HookSpecificOutput = c.rewrite(ev, r.Command)
		if out.HookSpecificOutput == nil {
			// The input could not be rewritten: the call must not run
			// unconfined.
			out.HookSpecificOutput = &claudeSpecific{HookEventName: "PreToolUse", PermissionDecision: "deny",
				PermissionDecisionReason: "intentgate could not route the command through its sandbox"}
		}
	case ev.Kind == PostTool:
		if r.Block != "" {
			out.Decision, out.Reason = "block", r.Block
		}
		if r.Context != "" {
			out.HookSpecificOutput = &claudeSpecific{HookEventName: ev.Name, AdditionalContext: r.Context}
		}
	case ev.Kind == SessionStart || ev.Kind == Prompt:
		if r.Context != "" {
			out.HookSpecificOutput = &claudeSpecific{HookEventName: ev.Name, AdditionalContext: r.Context}
		}
	}
	if out == (claudeOut{}) {
		return nil
	}
	return marshal(out)
}

// responseOutput is what a command printed, from a post event's
// tool_response: a string, or an object's stdout and stderr (Claude Code's
// Bash), or its "output" (Codex). Anything else is "".
func responseOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
		Output string `json:"output"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	out := o.Output
	for _, part := range []string{o.Stdout, o.Stderr} {
		if part == "" {
			continue
		}
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += part
	}
	return out
}
