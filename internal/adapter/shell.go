package adapter

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	"github.com/intentgate/intentgate/engine"
)

// shellReply answers an allowed pre-tool event of an agent whose shell
// commands intentgate can rewrite: the command runs under `intentgate exec`,
// confined to the session's intent, instead of as the agent wrote it. A
// command asking to run in the background is refused: it would be judged
// right after it started, while it kept running.
func (h *hookRun) shellReply() Reply {
	if !Rewrites(h.ev.Agent) || len(h.ev.Ops) != 1 || h.ev.Ops[0].Kind != OpCommand {
		return Reply{}
	}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(h.ev.Input, &in)
	if bg, ok := in["run_in_background"]; ok && string(bg) != "false" && string(bg) != "null" {
		return denyReply(&engine.Denial{Code: engine.InvalidArgument, Tool: h.ev.Tool, Parameter: "run_in_background",
			Message: "a command may not keep running in the background here: intentgate judges what a command changed when it ends",
			Hint:    "run the command in the foreground (without run_in_background), with a timeout if it is long"})
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
	self, err := os.Executable()
	if err != nil {
		self = "intentgate"
	}
	shell := "sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p // the agents' Bash tools speak bash
	}
	return strings.Join([]string{singleQuote(self), "exec", "--session", singleQuote(session),
		"--workspace", singleQuote(ws), "--", singleQuote(shell), "-c", singleQuote(command)}, " ")
}

// singleQuote quotes s for a POSIX shell: inside single quotes nothing is
// special, and a single quote is written as '\”.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
