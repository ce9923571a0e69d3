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
//   - BeforeTool rewrite: hookSpecificOutput.tool_input replaces the tool's
//     arguments (a shell command then runs under intentgate exec).
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
		LLMContent    json.RawMessage `json:"llmContent"`
		Error         json.RawMessage `json:"error"`
		ReturnDisplay json.RawMessage `json:"returnDisplay"`
	}
	if ev.Kind == PostTool && len(in.ToolResponse) > 0 {
		_ = json.Unmarshal(in.ToolResponse, &resp)
		if e := strings.TrimSpace(string(resp.Error)); e != "" && e != "null" && e != `""` {
			ev.Failed = true
		}
	}
	var err error
	ev.Ops, err = geminiOps(in.ToolName, in.ToolInput, resp.LLMContent, ev.Kind == PostTool)
	if err == nil && ev.Kind == PostTool && in.ToolName == "replace" && len(ev.Ops) == 1 {
		geminiBefore(&ev.Ops[0], resp.ReturnDisplay)
	}
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
		// A range (start_line/end_line since 0.61, offset/limit before)
		// never counts as reading the file.
		op := Op{Kind: OpRead, Path: p, Partial: present(m, "offset") || present(m, "limit") ||
			present(m, "start_line") || present(m, "end_line")}
		if post {
			// What the model was shown is llmContent; a cut file says so
			// in a header that starts with an empty line. The read counts
			// only when what was shown is the file as it is.
			var s string
			if json.Unmarshal(llm, &s) != nil || geminiTruncated(s) {
				op.Partial = true
			} else {
				op.Shown, op.HasShown = []byte(s), true
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
	if server, name, ok := geminiMCPName(tool); ok {
		return []Op{mcpOp(server, name, input)}, nil
	}
	if geminiReadOnly[tool] {
		return nil, nil
	}
	return []Op{UnknownOp(tool, input)}, nil
}

// geminiReadOnly are Gemini CLI's tools that change nothing in the
// workspace. (save_memory writes the user's own ~/.gemini/GEMINI.md.)
var geminiReadOnly = map[string]bool{
	"list_directory": true, "glob": true, "search_file_content": true, "grep_search": true,
	"read_many_files": true, "web_fetch": true, "google_web_search": true, "save_memory": true,
	"write_todos": true, "activate_skill": true, "ask_user": true, "enter_plan_mode": true,
	"exit_plan_mode": true, "get_internal_docs": true, "codebase_investigator": true,
}

// geminiTruncated reports a read_file result that is not the whole file.
func geminiTruncated(s string) bool {
	return strings.Contains(s, "IMPORTANT: The file content has been truncated") ||
		strings.Contains(s, "--- FILE CONTENT (truncated) ---") ||
		strings.HasPrefix(strings.TrimLeft(s, "\n"), "[File content truncated")
}

// geminiMCPName splits Gemini CLI's MCP tool names: mcp_<server>_<tool>
// (0.61), or mcp__<server>__<tool> as older versions and other agents write
// them. A server name may hold "_": intentgate's own is recognised whole,
// others are split at the first "_", which only affects how they are named.
func geminiMCPName(tool string) (string, string, bool) {
	if s, n, ok := mcpName(tool); ok {
		return s, n, true
	}
	rest, ok := strings.CutPrefix(tool, "mcp_")
	if !ok || rest == "" {
		return "", "", false
	}
	if n, ok := strings.CutPrefix(rest, IntentgateServer+"_"); ok && n != "" {
		return IntentgateServer, n, true
	}
	i := strings.Index(rest, "_")
	if i <= 0 || i+1 >= len(rest) {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// geminiBefore takes the file's old content from a replace result:
// returnDisplay.originalContent (null for a file it created).
func geminiBefore(op *Op, display json.RawMessage) {
	var d map[string]json.RawMessage
	if json.Unmarshal(display, &d) != nil {
		return
	}
	raw, ok := d["originalContent"]
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

type geminiOut struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName     string          `json:"hookEventName"`
	AdditionalContext string          `json:"additionalContext,omitempty"`
	ToolInput         json.RawMessage `json:"tool_input,omitempty"`
}

func (gemini) Render(ev *Event, r Reply) []byte {
	out := geminiOut{SystemMessage: r.Message}
	switch {
	case r.Deny != "" && (ev.Kind == PreTool || ev.Kind == Unknown):
		out.Decision, out.Reason = "deny", r.Deny
	case r.Command != "" && ev.Kind == PreTool:
		// The whole input with the command under intentgate exec: Gemini
		// rebuilds the tool from hookSpecificOutput.tool_input alone.
		in := rewrittenInput(ev.Input, "command", r.Command)
		if in == nil {
			out.Decision, out.Reason = "deny", "intentgate could not route the command through its sandbox"
			break
		}
		out.HookSpecificOutput = &geminiSpecific{HookEventName: ev.Name, ToolInput: in}
	case ev.Kind == PostTool || ev.Kind == SessionStart || ev.Kind == Prompt:
		ctx := strings.TrimSpace(strings.Join([]string{r.Block, r.Context}, "\n\n"))
		if ctx != "" {
			out.HookSpecificOutput = &geminiSpecific{HookEventName: ev.Name, AdditionalContext: ctx}
		}
	}
	return marshal(out)
}
