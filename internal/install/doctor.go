package install

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
	"slices"
	"strings"
	"time"
)

// doctorSession is the session of doctor's synthetic events; their
// refusals are recorded in the ledger under it.
const doctorSession = "intentgate-doctor"

// Doctor checks, for each of agents (every agent whose hooks are installed
// when named is false), that ws is governed, that the agent's configuration
// holds intentgate's hooks, that their command is found and refuses a
// synthetic write to .orchestration/ in the agent's format, and that the
// agent's own settings let the hooks run. It writes one line per check to
// out and returns the number of problems.
func Doctor(ws string, agents []string, named bool, out io.Writer) int {
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
	for _, agent := range agents {
		if !slices.Contains(Agents, agent) {
			problem("unknown agent %q; use one of: %s", agent, strings.Join(Agents, ", "))
			continue
		}
		d := dialects[agent]
		command := ""
		if b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(d.hookFile))); err == nil {
			command = hookCommandIn(b, agent)
		}
		if command == "" {
			if named {
				problem("%s: no intentgate hook in %s (run `intentgate install %s`)", agent, d.hookFile, agent)
			}
			continue
		}
		found++
		bin := firstWord(command)
		which := "intentgate's hook command"
		if IsLeanHook(bin) {
			which = "intentgate-hook, the lean hook program"
		}
		ok("%s: hooks installed, running %q (%s)", agent, command, which)
		if p, err := exec.LookPath(bin); err != nil {
			problem("%s: the hook command %q is not found (%v): the agent runs ungoverned; run `intentgate install %s` again", agent, bin, err, agent)
			continue
		} else {
			ok("%s: %s found at %s", agent, bin, p)
			problems, fine := doctorFull(p)
			for _, w := range problems {
				problem("%s: %s", agent, w)
			}
			if fine != "" {
				ok("%s: %s", agent, fine)
			}
		}
		if why := doctorProbe(ws, agent, command); why != "" {
			problem("%s: %s", agent, why)
		} else {
			ok("%s: the hook refuses a write to .orchestration/ in the agent's format", agent)
		}
		for _, w := range doctorAgentSetup(ws, d) {
			problem("%s: %s", agent, w)
		}
	}
	if found == 0 && !named {
		problem("no agent's intentgate hooks are installed in %s (run `intentgate install AGENT`)", ws)
	}
	return bad
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
	ev := dialects[agent].probe(ws, probe)
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
func doctorAgentSetup(ws string, d dialect) []string {
	if d.setup == nil {
		return nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return []string{"the home directory is unknown, so the agent's user settings were not checked: " + err.Error()}
	}
	return d.setup(ws, home)
}

// codexSetup: Codex runs a project's hooks only for a trusted project, and
// each hook only once trusted itself.
func codexSetup(ws, home string) []string {
	var out []string
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
	return out
}

// geminiSetup: Gemini CLI ignores an untrusted folder's settings.
func geminiSetup(ws, home string) []string {
	b, _ := os.ReadFile(filepath.Join(home, ".gemini", "trustedFolders.json"))
	if !strings.Contains(string(b), ws) {
		return []string{"the folder is not trusted in ~/.gemini/trustedFolders.json: Gemini CLI may ignore the project's settings and hooks; trust it when Gemini asks"}
	}
	return nil
}
