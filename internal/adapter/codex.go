package adapter

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// codexOps maps Codex's tools, as its hooks name them (captured from Codex
// 0.169.0, testdata/captured/codex): "Bash" with tool_input.command, the
// shell command line (exec_command's cmd); "apply_patch" with the patch in
// tool_input.command; MCP tools as mcp__<server>__<tool>.
//
// A Bash command that is an apply_patch heredoc is run by Codex as a patch,
// not by the shell, so it is judged as the file changes it names. A Bash
// command that only prints one whole file (`cat FILE`, `sed -n '1,$p' FILE`)
// is a read: Codex has no read tool, and this is how it reads; the read
// counts when the output it showed is the file's whole current content.
// Every other Bash command is a command; any other tool is unknown, which is
// judged like a command (it needs an intent, and what it changed is audited).
func codexOps(tool string, input, resp json.RawMessage, post bool) ([]Op, error) {
	m, err := object(input, "tool_input")
	if err != nil {
		return nil, err
	}
	switch tool {
	case "Bash", "exec_command", "shell", "local_shell", "shell_command":
		cmd, ok, err := str(m, "command")
		if err != nil || !ok {
			if c, ok2, err2 := str(m, "cmd"); err2 == nil && ok2 {
				cmd, ok, err = c, true, nil
			}
		}
		if err != nil || !ok {
			return nil, fmt.Errorf(`%s: the input has no "command" string`, tool)
		}
		if body, _, isPatch := shellPatch(cmd); isPatch && body != "" {
			return PatchOps(cmd)
		}
		if p, ok := ShellWholeRead(cmd); ok {
			op := Op{Kind: OpRead, Path: p}
			if post {
				var out string
				if json.Unmarshal(resp, &out) == nil {
					op.Shown, op.HasShown = []byte(out), true
				} else {
					// Output in a form not known: the read cannot be
					// told from a partial one.
					op.Partial = true
				}
			}
			return []Op{op}, nil
		}
		return []Op{{Kind: OpCommand, Command: cmd}}, nil
	case "apply_patch":
		body, ok, err := firstStr(m, "command", "input", "patch")
		if err != nil || !ok {
			return nil, fmt.Errorf(`apply_patch: the input has no "command" string`)
		}
		return PatchOps(body)
	}
	if server, name, ok := mcpName(tool); ok {
		return []Op{mcpOp(server, name, input)}, nil
	}
	return []Op{UnknownOp(tool, input)}, nil
}

// The whole-file reads recognised in a shell command line: one command, one
// plain file name, nothing else the shell would interpret.
var (
	shellWord = `([A-Za-z0-9_./@+,=~-]+|'[^']+')`
	catRe     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[ \t]*cat[ \t]+(?:--[ \t]+)?` + shellWord + `[ \t]*$`)
	})
	sedWholeRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[ \t]*sed[ \t]+-n[ \t]+(?:'1,\$p'|"1,\\\$p"|1,\\\$p)[ \t]+(?:--[ \t]+)?` + shellWord + `[ \t]*$`)
	})
	shellWordMeta = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[$\x60\\*?\[\]{}~]`) })
)

// ShellWholeRead reports the file a shell command line prints whole, when
// it is `cat FILE` or `sed -n '1,$p' FILE` and nothing else.
func ShellWholeRead(cmd string) (string, bool) {
	var m []string
	if m = catRe().FindStringSubmatch(cmd); m == nil {
		if m = sedWholeRe().FindStringSubmatch(cmd); m == nil {
			return "", false
		}
	}
	w := m[1]
	if strings.HasPrefix(w, "'") {
		w = strings.Trim(w, "'")
	} else if shellWordMeta().MatchString(w) || strings.HasPrefix(w, "-") {
		return "", false
	}
	if w == "" || strings.HasPrefix(w, "-") {
		return "", false
	}
	return w, true
}

// UnknownOp is a tool intentgate cannot classify: it is judged like a
// command (it needs an intent, and the workspace is compared before and
// after it), with the tool and its input as the command's text.
func UnknownOp(tool string, input json.RawMessage) Op {
	in := strings.TrimSpace(string(input))
	if in == "" {
		in = "{}"
	}
	return Op{Kind: OpCommand, Command: tool + " " + in, Opaque: true, Name: tool, Args: input}
}
