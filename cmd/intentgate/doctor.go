package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "doctor [AGENT]",
		Short: "Check that an installed agent is governed in this workspace, end to end",
		Long: `doctor checks, for AGENT (or every agent whose hooks are installed), that the
workspace is governed (.orchestration/), that the agent's configuration holds
intentgate's hooks, that the command they run is found, and that it answers a
synthetic pre-tool event (a write to .orchestration/) with a refusal in the
agent's own format. For Codex it also looks for the project's trust and the
hooks' trust in ~/.codex/config.toml; for Gemini CLI for the trusted folder.
It says what is missing and exits 1 if anything is.

The synthetic event is refused, and the refusal is recorded in the ledger under
the session "intentgate-doctor". Sandbox settings are not checked here.`,
		Example: `  intentgate doctor
  intentgate doctor codex -w ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := filepath.Abs(workspace)
			if err != nil {
				return err
			}
			list := installAgents
			if len(args) == 1 {
				list = []string{args[0]}
			}
			bad := runDoctor(ws, list, len(args) == 1, cmd.OutOrStdout())
			if bad > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d problem(s): the agent is not fully governed here", bad)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&workspace, "workspace", "w", ".", "the workspace directory")
	return cmd
}

// doctorFiles are the files holding each agent's hook commands.
func doctorFiles(ws, agent string) []string {
	switch agent {
	case "claude-code":
		return []string{filepath.Join(ws, ".claude", "settings.json")}
	case "codex":
		return []string{filepath.Join(ws, ".codex", "hooks.json")}
	case "gemini":
		return []string{filepath.Join(ws, ".gemini", "settings.json")}
	case "cursor":
		return []string{filepath.Join(ws, ".cursor", "hooks.json")}
	case "cline":
		return []string{filepath.Join(ws, ".clinerules", "hooks", "PreToolUse")}
	}
	return nil
}

func runDoctor(ws string, list []string, named bool, out io.Writer) int {
	bad := 0
	problem := func(format string, a ...any) {
		bad++
		fmt.Fprintf(out, "MISSING  "+format+"\n", a...)
	}
	ok := func(format string, a ...any) { fmt.Fprintf(out, "ok       "+format+"\n", a...) }
	if _, err := os.Lstat(filepath.Join(ws, ".orchestration")); err != nil {
		problem("%s is not governed: no .orchestration/ (run `intentgate init` there)", ws)
	} else {
		ok("%s is governed", ws)
	}
	found := 0
	for _, agent := range list {
		if !slicesContains(installAgents, agent) {
			problem("unknown agent %q; use one of: %s", agent, strings.Join(installAgents, ", "))
			continue
		}
		command := ""
		for _, f := range doctorFiles(ws, agent) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			command = hookCommandIn(b, agent)
		}
		if command == "" {
			if named {
				problem("%s: no intentgate hook in %s (run `intentgate install %s`)", agent, relTo(ws, doctorFiles(ws, agent)[0]), agent)
			}
			continue
		}
		found++
		ok("%s: hooks installed, running %q", agent, command)
		bin := firstWord(command)
		if p, err := exec.LookPath(bin); err != nil {
			problem("%s: the hook command %q is not found (%v): the agent runs ungoverned; run `intentgate install %s` again", agent, bin, err, agent)
			continue
		} else {
			ok("%s: %s found at %s", agent, bin, p)
		}
		if why := doctorProbe(ws, agent, command); why != "" {
			problem("%s: %s", agent, why)
		} else {
			ok("%s: the hook refuses a write to .orchestration/ in the agent's format", agent)
		}
		for _, w := range doctorAgentSetup(ws, agent) {
			problem("%s: %s", agent, w)
		}
	}
	if found == 0 && !named {
		problem("no agent's intentgate hooks are installed in %s (run `intentgate install AGENT`)", ws)
	}
	return bad
}

func slicesContains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func relTo(ws, p string) string {
	if r, err := filepath.Rel(ws, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// hookCommandIn finds the command line that runs `hook AGENT` in a
// configuration file (a JSON string or a script line).
func hookCommandIn(b []byte, agent string) string {
	re := regexp.MustCompile(`"command"\s*:\s*"((?:[^"\\]|\\.)*hook ` + regexp.QuoteMeta(agent) + `(?:[^"\\]|\\.)*)"`)
	if m := re.FindSubmatch(b); m != nil {
		var s string
		if json.Unmarshal([]byte(`"`+string(m[1])+`"`), &s) == nil {
			return s
		}
	}
	line := regexp.MustCompile(`(?m)^exec (.*hook ` + regexp.QuoteMeta(agent) + `.*)$`)
	if m := line.FindSubmatch(b); m != nil {
		return strings.TrimSpace(string(m[1]))
	}
	return ""
}

func firstWord(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "'") {
		if i := strings.Index(cmd[1:], "'"); i >= 0 {
			return cmd[1 : i+1]
		}
	}
	if i := strings.IndexAny(cmd, " \t"); i >= 0 {
		return cmd[:i]
	}
	return cmd
}

// doctorProbe sends the hook a synthetic pre-tool event writing to
// .orchestration/ and wants a refusal back.
func doctorProbe(ws, agent, command string) string {
	probe := filepath.Join(ws, ".orchestration", "doctor-probe")
	var ev map[string]any
	switch agent {
	case "claude-code":
		ev = map[string]any{"session_id": "intentgate-doctor", "cwd": ws, "hook_event_name": "PreToolUse",
			"tool_name": "Write", "tool_input": map[string]any{"file_path": probe, "content": "x"}, "tool_use_id": "doctor"}
	case "codex":
		ev = map[string]any{"session_id": "intentgate-doctor", "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
			"tool_input": map[string]any{"command": "*** Begin Patch\n*** Add File: .orchestration/doctor-probe\n+x\n*** End Patch"}, "tool_use_id": "doctor"}
	case "gemini":
		ev = map[string]any{"session_id": "intentgate-doctor", "cwd": ws, "hook_event_name": "BeforeTool",
			"tool_name": "write_file", "tool_input": map[string]any{"file_path": probe, "content": "x"}}
	case "cline":
		ev = map[string]any{"hookName": "tool_call", "taskId": "intentgate-doctor", "workspaceRoots": []string{ws},
			"tool_call": map[string]any{"id": "doctor", "name": "editor", "input": map[string]any{"path": probe, "new_text": "x"}}}
	case "cursor":
		ev = map[string]any{"hook_event_name": "preToolUse", "conversation_id": "intentgate-doctor", "workspace_roots": []string{ws},
			"tool_name": "Write", "tool_input": map[string]any{"file_path": probe, "content": "x"}}
	}
	raw, _ := json.Marshal(ev)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", command)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", command)
	}
	cmd.Dir = ws
	cmd.Stdin = bytes.NewReader(raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return fmt.Sprintf("the hook command could not run: %v", err)
	}
	o := stdout.String()
	if strings.Contains(o, "PROTECTED_PATH") || strings.Contains(o, "NO_ACTIVE_INTENT") {
		return ""
	}
	return fmt.Sprintf("the hook did not refuse a write to .orchestration/ (exit %d, stdout %q, stderr %q)",
		cmd.ProcessState.ExitCode(), strings.TrimSpace(o), strings.TrimSpace(stderr.String()))
}

// doctorAgentSetup checks what else the agent needs to run the hooks.
func doctorAgentSetup(ws, agent string) []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	var out []string
	switch agent {
	case "codex":
		dir := os.Getenv("CODEX_HOME")
		if dir == "" {
			dir = filepath.Join(home, ".codex")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "config.toml"))
		cfg := string(b)
		if !strings.Contains(cfg, fmt.Sprintf("[projects.%q]", ws)) || !strings.Contains(cfg, "trusted") {
			out = append(out, fmt.Sprintf("the project is not trusted in %s: Codex ignores its hooks; %s",
				filepath.Join(dir, "config.toml"), codexTrustNote(ws)))
		}
		if !strings.Contains(cfg, filepath.Join(ws, ".codex", "hooks.json")+":") {
			out = append(out, "no hook trust for .codex/hooks.json in "+filepath.Join(dir, "config.toml")+
				": Codex skips untrusted hooks without a word; trust them with /hooks in codex")
		}
	case "gemini":
		b, _ := os.ReadFile(filepath.Join(home, ".gemini", "trustedFolders.json"))
		if !strings.Contains(string(b), ws) {
			out = append(out, "the folder is not trusted in ~/.gemini/trustedFolders.json: Gemini CLI may ignore the project's settings and hooks; trust it when Gemini asks")
		}
	}
	return out
}
