package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// gemini is Gemini CLI's hook protocol (geminicli.com/docs/hooks/reference).
//
// Input: session_id, cwd, hook_event_name, timestamp; BeforeTool and
// AfterTool add tool_name and tool_input (AfterTool also tool_response with
// llmContent, returnDisplay and error), BeforeAgent adds prompt.
// Output: JSON on stdout, exit status 0, and nothing else on stdout:
//   - BeforeTool refusal: {"decision":"deny","reason":...}; the reason is
//     sent to the model as the tool's error and the turn goes on.
//   - AfterTool: hookSpecificOutput.additionalContext is appended to the
//     tool's result. ("decision":"deny" would replace the result, hiding
//     what the tool said, so it is not used.)
//   - SessionStart, BeforeAgent: hookSpecificOutput.additionalContext.
//   - systemMessage: shown to the user.
type gemini struct{}

func (gemini) Name() string { return "gemini" }

type geminiIn struct {
	SessionID    string          `json:"session_id"`
	Cwd          string          `json:"cwd"`
	Event        string          `json:"hook_event_name"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	Prompt       string          `json:"prompt"`
}

func geminiKind(name string) Kind {
	switch name {
	case "BeforeTool":
		return PreTool
	case "AfterTool":
		return PostTool
	case "SessionStart":
		return SessionStart
	case "BeforeAgent":
		return Prompt
	case "AfterAgent":
		return Stop
	}
	return Unknown
}

func (gemini) Parse(raw []byte) (*Event, error) {
	ev := &Event{Agent: "gemini"}
	var in geminiIn
	if err := json.Unmarshal(raw, &in); err != nil {
		var name struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(raw, &name) == nil {
			ev.Name, ev.Kind = name.Event, geminiKind(name.Event)
		}
		return ev, fmt.Errorf("the event is not a valid hook payload: %w", err)
	}
	ev.Name, ev.Kind = in.Event, geminiKind(in.Event)
	ev.Session, ev.Cwd, ev.Tool, ev.Input = in.SessionID, in.Cwd, in.ToolName, in.ToolInput
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
	var resp struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	}
	if ev.Kind == PostTool && len(in.ToolResponse) > 0 {
		_ = json.Unmarshal(in.ToolResponse, &resp)
		if e := strings.TrimSpace(string(resp.Error)); e != "" && e != "null" && e != `""` {
			ev.Failed = true
		}
	}
	var err error
	ev.Ops, err = geminiOps(in.ToolName, in.ToolInput, resp.LLMContent, ev.Kind == PostTool)
	return ev, err
}

// geminiOps maps Gemini CLI's built-in tools (write_file, replace, read_file,
// run_shell_command) and MCP tools (mcp__<server>__<tool>).
func geminiOps(tool string, input, llm json.RawMessage, post bool) ([]Op, error) {
	m, err := object(input, "tool_input")
	if err != nil {
		return nil, err
	}
	switch tool {
	case "write_file":
		p, err := requirePath(m, tool, "file_path", "path")
		if err != nil {
			return nil, err
		}
		content, has, err := str(m, "content")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		return []Op{{Kind: OpWrite, Path: p, Content: content, HasContent: has}}, nil
	case "replace":
		p, err := requirePath(m, tool, "file_path", "path")
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpEdit, Path: p}}, nil
	case "read_file":
		p, err := requirePath(m, tool, "file_path", "absolute_path", "path")
		if err != nil {
			return nil, err
		}
		op := Op{Kind: OpRead, Path: p, Partial: present(m, "offset") || present(m, "limit")}
		if post {
			// A long file is cut and the result says so in its first line;
			// the content itself is not compared, as the tool may decorate it.
			var s string
			if json.Unmarshal(llm, &s) == nil {
				first, _, _ := strings.Cut(s, "\n")
				if strings.Contains(strings.ToLower(first), "truncated") {
					op.Partial = true
				}
			}
		}
		return []Op{op}, nil
	case "run_shell_command":
		cmd, ok, err := str(m, "command")
		if err != nil || !ok {
			return nil, fmt.Errorf(`run_shell_command: the input has no "command" string`)
		}
		return []Op{{Kind: OpCommand, Command: cmd}}, nil
	}
	if server, name, ok := mcpName(tool); ok {
		return []Op{mcpOp(server, name, input)}, nil
	}
	return nil, nil
}

type geminiOut struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

func (gemini) Render(ev *Event, r Reply) []byte {
	out := geminiOut{SystemMessage: r.Message}
	switch {
	case r.Deny != "" && (ev.Kind == PreTool || ev.Kind == Unknown):
		out.Decision, out.Reason = "deny", r.Deny
	case ev.Kind == PostTool || ev.Kind == SessionStart || ev.Kind == Prompt:
		ctx := strings.TrimSpace(strings.Join([]string{r.Block, r.Context}, "\n\n"))
		if ctx != "" {
			out.HookSpecificOutput = &geminiSpecific{HookEventName: ev.Name, AdditionalContext: ctx}
		}
	}
	return marshal(out)
}
