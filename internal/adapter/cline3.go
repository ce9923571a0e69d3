package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Cline 3 (the cline CLI 3.x on npm, @cline/core) runs the same hook files,
// .clinerules/hooks/<PreToolUse|PostToolUse|...>, with other payloads
// (captured from cline 3.0.65, testdata/captured/cline):
//
//	hookName "tool_call":   tool_call {id, name, input}, plus the older
//	                        preToolUse {toolName, parameters} with every
//	                        parameter flattened to a string
//	hookName "tool_result": tool_result {id, name, input, output, error},
//	                        plus postToolUse {..., result, success}
//	agent_start, agent_resume, prompt_submit, agent_end, agent_abort,
//	agent_error, session_shutdown: run without waiting for the answer
//
// taskId is the conversation, workspaceRoots[0] the working directory.
// The answer is read as before: {"cancel":true, "errorMessage":...} stops
// the run before the tool runs (Cline 3 has no way for a file hook to skip
// one call and go on); contextModification is added to what the model reads.
type cline3Call struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	Error  *string         `json:"error"`
}

func cline3Event(ev *Event, in clineIn) error {
	c := in.ToolCall
	if ev.Kind == PostTool {
		c = in.ToolResult
	}
	if c == nil || c.Name == "" {
		return fmt.Errorf("the %s event has no tool name", in.HookName)
	}
	ev.CallID, ev.Tool, ev.Input = c.ID, c.Name, c.Input
	ev.Failed = c.Error != nil && *c.Error != ""
	ops, err := cline3Ops(c.Name, c.Input, c.Output, ev.Kind == PostTool)
	ev.Ops = ops
	return err
}

// cline3Ops maps Cline 3's tools; paths are absolute (the tools ask for
// absolute paths) or relative to the working directory.
func cline3Ops(tool string, input, output json.RawMessage, post bool) ([]Op, error) {
	switch tool {
	case "editor":
		m, err := object(input, "input")
		if err != nil {
			return nil, err
		}
		p, err := requirePath(m, tool, "path")
		if err != nil {
			return nil, err
		}
		newText, hasNew, err := str(m, "new_text")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		if !present(m, "old_text") && !present(m, "insert_line") {
			// Creates the file with new_text when it does not exist: a
			// whole-file write, held to the rules of one.
			return []Op{{Kind: OpWrite, Path: p, Content: newText, HasContent: hasNew}}, nil
		}
		return []Op{{Kind: OpEdit, Path: p}}, nil
	case "read_files":
		files, err := cline3ReadRequests(input)
		if err != nil {
			return nil, err
		}
		var results []cline3Result
		if post {
			_ = json.Unmarshal(output, &results)
		}
		ops := make([]Op, 0, len(files))
		for i, f := range files {
			op := Op{Kind: OpRead, Path: f.path, Partial: f.ranged}
			if post {
				if i < len(results) && results[i].Success {
					if shown, whole := cline3Shown(results[i].Result); whole {
						op.Shown, op.HasShown, op.ShownTrimmed = []byte(shown), true, true
					} else {
						op.Partial = true
					}
				} else {
					op.Partial = true // no output for it: nothing was seen
				}
			}
			ops = append(ops, op)
		}
		return ops, nil
	case "run_commands":
		cmds, err := cline3Commands(input)
		if err != nil {
			return nil, err
		}
		return []Op{{Kind: OpCommand, Command: strings.Join(cmds, "\n")}}, nil
	case "apply_patch":
		var body string
		if json.Unmarshal(input, &body) != nil {
			m, err := object(input, "input")
			if err != nil {
				return nil, err
			}
			b, ok, err := str(m, "input")
			if err != nil || !ok {
				return nil, errors.New(`apply_patch: the input has no "input" string`)
			}
			body = b
		}
		return PatchOps(body)
	case "new_rule":
		return clineOps(tool, input)
	}
	if cline3ReadOnly[tool] || strings.HasPrefix(tool, "team_") {
		return nil, nil
	}
	if server, name, ok := cline3MCPName(tool); ok {
		return []Op{mcpOp(server, name, input)}, nil
	}
	return []Op{UnknownOp(tool, input)}, nil
}

// cline3ReadOnly are Cline 3's tools that change nothing in the workspace
// themselves (the team tools coordinate agents whose own tools are hooked).
var cline3ReadOnly = map[string]bool{
	"search_codebase": true, "fetch_web_content": true, "ask_question": true,
	"skills": true, "submit_and_exit": true, "spawn_agent": true,
}

// cline3MCPName splits Cline 3's MCP tool names, "<server>__<tool>".
func cline3MCPName(tool string) (string, string, bool) {
	if s, n, ok := mcpName(tool); ok {
		return s, n, true
	}
	i := strings.Index(tool, "__")
	if i <= 0 || i+2 >= len(tool) {
		return "", "", false
	}
	return tool[:i], tool[i+2:], true
}

type cline3Read struct {
	path   string
	ranged bool
}

// cline3ReadRequests accepts every input form read_files takes: a path, a
// list of paths or of {path, start_line, end_line}, or an object with
// files, paths or file_paths (one or a list), file_path or filePath.
func cline3ReadRequests(input json.RawMessage) ([]cline3Read, error) {
	var out []cline3Read
	var one func(v any) error
	one = func(v any) error {
		switch x := v.(type) {
		case string:
			if x == "" {
				return errors.New("read_files: a file request has an empty path")
			}
			out = append(out, cline3Read{path: x})
		case []any:
			for _, e := range x {
				if err := one(e); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, k := range []string{"files", "paths", "file_paths"} {
				if v, ok := x[k]; ok {
					return one(v)
				}
			}
			var p string
			for _, k := range []string{"path", "file_path", "filePath"} {
				if s, ok := x[k].(string); ok {
					p = s
					break
				}
			}
			if p == "" {
				return errors.New("read_files: a file request has no path")
			}
			ranged := x["start_line"] != nil || x["end_line"] != nil
			out = append(out, cline3Read{path: p, ranged: ranged})
		default:
			return errors.New("read_files: the input names no file")
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, fmt.Errorf("read_files: %w", err)
	}
	if err := one(v); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("read_files: the input names no file")
	}
	return out, nil
}

type cline3Result struct {
	Query   string `json:"query"`
	Result  string `json:"result"`
	Success bool   `json:"success"`
}

var cline3LineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *([0-9]+) \| (.*)$`) })

// cline3Shown works back what a read_files result showed: lines numbered
// "N | text" from 1 without a gap, no "[Showing lines ...]" note and no line
// cut short. It returns the text without its last newline, and whether it is
// the whole file.
func cline3Shown(result string) (string, bool) {
	if result == "" {
		return "", true
	}
	if strings.Contains(result, "\n\n[Showing lines ") {
		return "", false
	}
	lines := strings.Split(result, "\n")
	text := make([]string, 0, len(lines))
	for i, l := range lines {
		m := cline3LineRe().FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n != i+1 {
			return "", false
		}
		if strings.HasSuffix(m[2], " [line truncated]") {
			return "", false
		}
		text = append(text, m[2])
	}
	return strings.Join(text, "\n"), true
}

// cline3Commands lists the commands of run_commands: a string, a list of
// strings or of {command, args}, or an object with commands, command (with
// args) or cmd.
func cline3Commands(input json.RawMessage) ([]string, error) {
	var out []string
	var one func(v any) error
	one = func(v any) error {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				if err := one(e); err != nil {
					return err
				}
			}
		case map[string]any:
			if c, ok := x["commands"]; ok {
				return one(c)
			}
			if c, ok := x["cmd"]; ok {
				return one(c)
			}
			c, ok := x["command"].(string)
			if !ok {
				return errors.New(`run_commands: a command has no "command" string`)
			}
			if args, ok := x["args"].([]any); ok {
				for _, a := range args {
					s, _ := a.(string)
					c += " " + shellQuote(s)
				}
			}
			out = append(out, c)
		default:
			return errors.New("run_commands: the input names no command")
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, fmt.Errorf("run_commands: %w", err)
	}
	if err := one(v); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("run_commands: the input names no command")
	}
	return out, nil
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>*?()[]{}~#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cline3CommandInput is run_commands' input running command instead: the
// input object's other fields kept, its command fields replaced by one
// "commands" entry.
func cline3CommandInput(input json.RawMessage, command string) json.RawMessage {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{} // a bare string or list of commands
	}
	for _, k := range []string{"command", "cmd", "args", "commands"} {
		delete(m, k)
	}
	m["commands"] = json.RawMessage(strings.TrimSpace(string(marshal([]string{command}))))
	return json.RawMessage(strings.TrimSpace(string(marshal(m))))
}
