package adapter

import (
	"encoding/json"
	"os/exec"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/selfexe"
)

// Which agents let a pre-tool hook replace a shell command before it runs,
// and how (each checked against the agent's own source or documentation):
//
//   - Claude Code: PreToolUse hookSpecificOutput.updatedInput with
//     permissionDecision "allow" (code.claude.com/docs/en/hooks).
//   - Codex (0.169.0): the same fields; "allow" is accepted only together
//     with updatedInput, and a shell tool's updatedInput is {"command": ...}
//     (codex-rs/hooks/src/engine/output_parser.rs, parse_pre_tool_use;
//     openai/codex pull 20527).
//   - Gemini CLI (0.61.0): BeforeTool hookSpecificOutput.tool_input; the tool
//     is rebuilt from it (packages/core/src/scheduler/hook-utils.ts,
//     evaluateBeforeToolHook; docs/hooks/reference.md).
//   - Cline 3 (the cline CLI 3.x, @cline/core): a tool_call hook's
//     "overrideInput" replaces the tool's input
//     (sdk/packages/core/src/hooks/hook-file-hooks.ts,
//     beforeToolResultFromControl).
//
// Cursor and the older Cline hook protocol have no such field that their
// documentation states: there a command runs as the agent wrote it, and is
// judged by what it changed when its post-tool event comes.

// Rewrites reports whether intentgate replaces the shell command of ev, a
// pre-tool event, by the same command under `intentgate exec`.
func Rewrites(ev *Event) bool {
	switch ev.Agent {
	case "claude-code", "codex", "gemini":
		return true
	case "cline":
		return ev.Name == "tool_call" // Cline 3's protocol; the older one cannot
	}
	return false
}

// backgroundParams are the input fields with which an agent's shell tool
// starts a command that keeps running after the call returns.
var backgroundParams = []string{"run_in_background", "is_background"}

// shellReply answers an allowed pre-tool event of an agent whose shell
// commands intentgate can rewrite: the command runs under `intentgate exec`,
// confined to the session's intent, instead of as the agent wrote it. A
// command asking to run in the background is refused: it would be judged
// right after it started, while it kept running.
func (h *hookRun) shellReply() Reply {
	if !Rewrites(h.ev) || len(h.ev.Ops) != 1 || h.ev.Ops[0].Kind != OpCommand || h.ev.Ops[0].Opaque {
		return Reply{}
	}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(h.ev.Input, &in)
	for _, p := range backgroundParams {
		if bg, ok := in[p]; ok && string(bg) != "false" && string(bg) != "null" {
			return denyReply(&engine.Denial{Code: engine.InvalidArgument, Tool: h.ev.Tool, Parameter: p,
				Message: "a command may not keep running in the background here: intentgate judges what a command changed when it ends",
				Hint:    "run the command in the foreground (without " + p + "), with a timeout if it is long"})
		}
	}
	command := h.ev.Ops[0].Command
	if strings.ContainsRune(command, 0) {
		return denyReply(&engine.Denial{Code: engine.InvalidArgument, Tool: h.ev.Tool, Parameter: "command",
			Message: "the command contains a NUL byte, which no shell can run"})
	}
	return Reply{Command: ExecCommandLine(h.ev.Session, h.dir, command)}
}

// ExecCommandLine is the shell command that runs command under intentgate
// exec for session in the workspace ws. Every part is single-quoted, so
// nothing in the original command is interpreted by the outer shell.
func ExecCommandLine(session, ws, command string) string {
	self := intentgateExecutable()
	shell := "sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p // the agents' shell tools speak bash
	}
	return strings.Join([]string{singleQuote(self), "exec", "--session", singleQuote(session),
		"--workspace", singleQuote(ws), "--", singleQuote(shell), "-c", singleQuote(command)}, " ")
}

// intentgateExecutable is the intentgate that runs `intentgate exec`: this
// process's executable, or, in intentgate-hook (which has no exec command)
// and intentgate-full, the intentgate installed beside it.
func intentgateExecutable() string {
	self, err := selfexe.Intentgate()
	if err != nil {
		return "intentgate"
	}
	return self
}

// singleQuote quotes s for a POSIX shell: inside single quotes nothing is
// special, and a single quote is written as '\”.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// UnwrapExecCommandLine is the inverse of ExecCommandLine: the command line
// wrapped for session, and whether line is exactly such a wrapping. Agents
// report the rewritten input in their post-tool events; the call is recorded,
// and keyed, by the command the agent asked for.
func UnwrapExecCommandLine(session, line string) (string, bool) {
	words, ok := quotedWords(line)
	if !ok || len(words) != 10 {
		return "", false
	}
	want := []string{1: "exec", 2: "--session", 4: "--workspace", 6: "--", 8: "-c"}
	for i, w := range want {
		if w != "" && words[i].text != w {
			return "", false
		}
	}
	if words[3].text != session || !words[9].quoted {
		return "", false
	}
	return words[9].text, true
}

type shellWordQ struct {
	text   string
	quoted bool
}

// quotedWords splits line as ExecCommandLine writes it: words separated by
// one space, each bare (no shell metacharacters) or single-quoted with '\”
// for a quote. Anything else is not such a line.
func quotedWords(line string) ([]shellWordQ, bool) {
	var out []shellWordQ
	for len(line) > 0 {
		var w shellWordQ
		if line[0] == '\'' {
			var b strings.Builder
			for {
				end := strings.IndexByte(line[1:], '\'')
				if end < 0 {
					return nil, false
				}
				b.WriteString(line[1 : 1+end])
				line = line[2+end:]
				if !strings.HasPrefix(line, `\''`) {
					break
				}
				b.WriteByte('\'')
				line = line[2:] // keep the opening quote of the next part
			}
			w = shellWordQ{text: b.String(), quoted: true}
		} else {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			w.text, line = line[:end], line[end:]
			if w.text == "" || strings.ContainsAny(w.text, "'\"\\$`;&|<>()*?[]{}~#\t\n") {
				return nil, false
			}
		}
		out = append(out, w)
		if line == "" {
			break
		}
		if line[0] != ' ' || len(line) == 1 {
			return nil, false
		}
		line = line[1:]
	}
	return out, true
}

// unwrapExec restores, in a post-tool event, the command the agent asked
// for where the event reports the command intentgate rewrote it into, so
// the call is keyed and recorded as its pre-tool event saw it.
func (e *Event) unwrapExec() {
	if e.Kind != PostTool {
		return
	}
	for i, op := range e.Ops {
		if op.Kind != OpCommand || op.Opaque {
			continue
		}
		inner, ok := UnwrapExecCommandLine(e.Session, op.Command)
		if !ok {
			continue
		}
		e.Ops[i].Command = inner
		if e.CallID != "" {
			continue
		}
		// Without a call id the input keys the call: put the command back.
		var m map[string]json.RawMessage
		if json.Unmarshal(e.Input, &m) != nil {
			continue
		}
		var cur string
		if json.Unmarshal(m["command"], &cur) != nil || cur != op.Command {
			continue
		}
		if raw, err := json.Marshal(inner); err == nil {
			m["command"] = raw
			if in, err := json.Marshal(m); err == nil {
				e.Input = in
			}
		}
	}
}

// rewrittenInput is the tool's input object with field set to value, every
// other field kept; nil when the input is not an object.
func rewrittenInput(input json.RawMessage, field string, value any) json.RawMessage {
	m, err := object(input, "tool_input")
	if err != nil {
		return nil
	}
	raw := marshal(value)
	m[field] = json.RawMessage(strings.TrimSpace(string(raw)))
	return json.RawMessage(strings.TrimSpace(string(marshal(m))))
}
