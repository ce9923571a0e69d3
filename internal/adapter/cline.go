package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// cline is Cline's hook protocol (docs.cline.bot/customization/hooks, and
// the hook reference in the cline repository).
//
// Each event runs the executable of its name in .clinerules/hooks/ (or the
// global hooks directory). Input: clineVersion, hookName, timestamp, taskId,
// workspaceRoots, userId, and one object named after the event:
// preToolUse {toolName, parameters}, postToolUse {toolName, parameters,
// result, success, executionTimeMs}, userPromptSubmit {prompt},
// taskStart {taskMetadata {taskId, ulid, initialTask}}.
// Output: the last JSON object on stdout, {"cancel":bool,
// "contextModification":..., "errorMessage":...}: cancel blocks the action,
// errorMessage is shown to the user, contextModification is added to what
// the model reads from the next request on. A non-zero exit or invalid JSON
// blocks too.
type cline struct{}

func (cline) Name() string { return "cline" }

type clineTool struct {
	ToolName   string          `json:"toolName"`
	Parameters json.RawMessage `json:"parameters"`
	Success    *bool           `json:"success"`
}

type clineIn struct {
	HookName         string      `json:"hookName"`
	ToolCall         *cline3Call `json:"tool_call"`
	ToolResult       *cline3Call `json:"tool_result"`
	TaskID           string      `json:"taskId"`
	Roots            []string    `json:"workspaceRoots"`
	PreToolUse       *clineTool  `json:"preToolUse"`
	PostToolUse      *clineTool  `json:"postToolUse"`
	UserPromptSubmit *struct {
		Prompt string `json:"prompt"`
	} `json:"userPromptSubmit"`
	TaskStart *struct {
		TaskMetadata struct {
			InitialTask string `json:"initialTask"`
		} `json:"taskMetadata"`
	} `json:"taskStart"`
}

func clineKind(name string) Kind {
	switch name {
	case "PreToolUse":
		return PreTool
	case "PostToolUse":
		return PostTool
	case "TaskStart", "TaskResume":
		return SessionStart
	case "UserPromptSubmit":
		return Prompt
	case "TaskComplete", "TaskCancel":
		return Stop
	// Cline 3 (the CLI and SDK, 3.x): the same hook files, other names.
	case "tool_call":
		return PreTool
	case "tool_result":
		return PostTool
	case "agent_start", "agent_resume":
		return SessionStart
	case "prompt_submit":
		return Prompt
	case "agent_end", "agent_abort", "agent_error", "session_shutdown":
		return Stop
	}
	return Unknown
}

func (cline) Parse(raw []byte) (*Event, error) {
	ev := &Event{Agent: "cline"}
	var in clineIn
	if err := json.Unmarshal(raw, &in); err != nil {
		var name struct {
			HookName string `json:"hookName"`
		}
		if json.Unmarshal(raw, &name) == nil {
			ev.Name, ev.Kind = name.HookName, clineKind(name.HookName)
		}
		return ev, fmt.Errorf("the event is not a valid hook payload: %w", err)
	}
	ev.Name, ev.Kind, ev.Session = in.HookName, clineKind(in.HookName), in.TaskID
	if len(in.Roots) > 0 {
		ev.Cwd = in.Roots[0]
	}
	switch ev.Kind {
	case Unknown:
		if in.HookName == "" {
			return ev, errors.New(`the event has no "hookName"`)
		}
	case Prompt:
		if in.UserPromptSubmit != nil {
			ev.Prompt = in.UserPromptSubmit.Prompt
		}
	case SessionStart:
		if in.TaskStart != nil {
			ev.Prompt = in.TaskStart.TaskMetadata.InitialTask
		}
	case PreTool, PostTool:
		if in.HookName == "tool_call" || in.HookName == "tool_result" {
			return ev, cline3Event(ev, in)
		}
		t := in.PreToolUse
		if ev.Kind == PostTool {
			t = in.PostToolUse
		}
		if t == nil || t.ToolName == "" {
			return ev, fmt.Errorf("the %s event has no toolName", in.HookName)
		}
		ev.Tool, ev.Input = t.ToolName, t.Parameters
		ev.Failed = t.Success != nil && !*t.Success
		ops, err := clineOps(t.ToolName, t.Parameters)
		if err != nil {
			return ev, err
		}
		ev.Ops = ops
	}
	return ev, nil
}

// clineOps maps Cline's tools. Paths are relative to the workspace root.
func clineOps(tool string, params json.RawMessage) ([]Op, error) {
	m, err := object(params, "parameters")
	if err != nil {
		return nil, err
	}
	switch tool {
	case "write_to_file":
		p, err := requirePath(m, tool, "path")
		if err != nil {
			return nil, err
		}
		content, has, err := str(m, "content")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		return []Op{{Kind: OpWrite, Path: p, Content: content, HasContent: has}}, nil
	case "replace_in_file", "apply_diff", "insert_content", "search_and_replace":
		p, err := requirePath(m, tool, "path")
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpEdit, Path: p}}, nil
	case "read_file":
		p, err := requirePath(m, tool, "path")
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpRead, Path: p}}, nil
	case "execute_command":
		cmd, ok, err := str(m, "command")
		if err != nil || !ok {
			return nil, errors.New(`execute_command: the parameters have no "command" string`)
		}
		return []Op{{Kind: OpCommand, Command: cmd}}, nil
	case "use_mcp_tool":
		server, _, _ := str(m, "server_name")
		name, _, _ := str(m, "tool_name")
		if name == "" {
			return nil, errors.New(`use_mcp_tool: the parameters have no "tool_name"`)
		}
		args := json.RawMessage("{}")
		if a, ok, _ := str(m, "arguments"); ok && strings.TrimSpace(a) != "" {
			if json.Valid([]byte(a)) {
				args = json.RawMessage(a)
			} else {
				args, _ = json.Marshal(a)
			}
		} else if raw, ok := m["arguments"]; ok && len(raw) > 0 && raw[0] == '{' {
			args = raw
		}
		return []Op{mcpOp(server, name, args)}, nil
	case "new_rule":
		// Writes a rule file (path, content), .clinerules/ included.
		p, err := requirePath(m, tool, "path")
		if err != nil {
			return nil, err
		}
		content, has, _ := str(m, "content")
		return []Op{{Kind: OpWrite, Path: p, Content: content, HasContent: has}}, nil
	case "apply_patch":
		body, ok, err := firstStr(m, "input", "patch", "diff")
		if err != nil || !ok {
			return nil, errors.New(`apply_patch: the parameters have no "input" string`)
		}
		return PatchOps(body)
	}
	if clineReadOnly[tool] {
		return nil, nil
	}
	return []Op{UnknownOp(tool, params)}, nil
}

// clineReadOnly are the tools of the older Cline that change nothing in the
// workspace: intentgate has nothing to check for them.
var clineReadOnly = map[string]bool{
	"list_files": true, "search_files": true, "list_code_definition_names": true,
	"ask_followup_question": true, "attempt_completion": true, "plan_mode_respond": true,
	"load_mcp_documentation": true, "access_mcp_resource": true, "web_fetch": true,
	"browser_action": true, "focus_chain": true, "condense": true, "summarize_task": true,
	"report_bug": true, "new_task": true, "use_skill": true,
}

type clineOut struct {
	Cancel              bool            `json:"cancel"`
	ContextModification string          `json:"contextModification,omitempty"`
	ErrorMessage        string          `json:"errorMessage,omitempty"`
	OverrideInput       json.RawMessage `json:"overrideInput,omitempty"`
}

func (cline) Render(ev *Event, r Reply) []byte {
	out := clineOut{}
	if r.Deny != "" && (ev.Kind == PreTool || ev.Kind == Unknown) {
		// errorMessage is what the person sees; the model learns of the
		// refusal through the context.
		out.Cancel, out.ErrorMessage = true, r.Deny
		out.ContextModification = "intentgate refused the tool call: " + r.Deny
		return marshal(out)
	}
	if r.Command != "" && ev.Kind == PreTool {
		// Cline 3's overrideInput replaces run_commands' input: the commands
		// as one script, under intentgate exec.
		in := cline3CommandInput(ev.Input, r.Command)
		if in == nil {
			out.Cancel, out.ErrorMessage = true, "intentgate could not route the command through its sandbox"
			return marshal(out)
		}
		out.OverrideInput = in
	}
	out.ContextModification = strings.TrimSpace(strings.Join([]string{r.Block, r.Context}, "\n\n"))
	if r.Message != "" && out.ContextModification == "" && ev.Kind == PostTool {
		// A post-tool note for the person (a change that was not fully
		// recorded) is also context: Cline has no other channel for it.
		out.ContextModification = r.Message
	}
	return marshal(out)
}
