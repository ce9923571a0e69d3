package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/internal/install"
)

// runCLI runs the binary and returns its combined output; home, if set, is
// the home directory it sees.
func runCLI(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	bin := e2eBinary(t)
	cmd := exec.Command(bin, args...)
	// intentgate on PATH, as a user who installed it has it.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if home != "" {
		cmd.Env = append(cmd.Env, "HOME="+home, "USERPROFILE="+home, "CODEX_HOME=")
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestInstallCommandNotOnPath: an agent that cannot start the hook command
// runs ungoverned, so install writes this binary's absolute path when no
// intentgate is on PATH, and refuses a --command that names nothing.
func TestInstallCommandNotOnPath(t *testing.T) {
	bin := e2eBinary(t)
	ws := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("install", "gemini", "-w", ws)
	if err != nil {
		t.Fatalf("install gemini: %v\n%s", err, out)
	}
	settings, _ := os.ReadFile(filepath.Join(ws, ".gemini", "settings.json"))
	real, _ := filepath.EvalSymlinks(bin)
	if !strings.Contains(out, "not on PATH") || !strings.Contains(string(settings), real+" hook gemini") {
		t.Errorf("install without intentgate on PATH: %s\nsettings: %s\nwant the absolute path %s", out, settings, real)
	}
	out, err = run("install", "claude-code", "-w", ws, "--command", "no-such-intentgate")
	if err == nil || !strings.Contains(out, "not on PATH") {
		t.Errorf("--command naming nothing: err %v, out %s; want a failure naming PATH", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude")); err == nil {
		t.Errorf("a failed install wrote .claude/")
	}
}

var testHomes sync.Map // test name -> its home directory

// mustCLI runs intentgate with a home directory of the test's own (install
// codex records trust in the user's Codex config, which must not be this
// machine's), and with --trust for install codex.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	home, _ := testHomes.LoadOrStore(t.Name(), t.TempDir())
	if len(args) > 1 && args[0] == "install" && args[1] == "codex" && !slices.Contains(args, "--trust") {
		args = append(args, "--trust")
	}
	out, err := runCLI(t, home.(string), args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// tree lists every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				out[filepath.ToSlash(rel)+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			diffs = append(diffs, "only before: "+k)
		} else if v != w {
			diffs = append(diffs, fmt.Sprintf("changed: %s\nbefore: %q\nafter:  %q", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "only after: "+k)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// userClaudeSettings is a Claude Code settings file as a person keeps it.
var userClaudeSettings = func() string {
	b, err := os.ReadFile("../../internal/install/testdata/user-claude-settings.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestInstallClaudeCodeMergesAndUninstallRestores(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	files := map[string]string{
		".claude/settings.json": userClaudeSettings,
		".mcp.json":             "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\"\n    }\n  }\n}\n",
	}
	for rel, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	original := tree(t, ws)

	out := mustCLI(t, "install", "claude-code", "-w", ws, "--dry-run")
	if !strings.Contains(out, "--- a/.claude/settings.json\n+++ b/.claude/settings.json\n") || !strings.Contains(out, `+        "matcher": "Write|Edit|MultiEdit|NotebookEdit|Read|Bash|mcp__.*",`) ||
		!strings.Contains(out, "+++ b/.mcp.json") {
		t.Errorf("dry-run output lacks the diffs:\n%s", out)
	}
	sameTree(t, "after --dry-run", original, tree(t, ws))

	out = mustCLI(t, "install", "claude-code", "-w", ws)
	if !strings.Contains(out, "updated .claude/settings.json") || !strings.Contains(out, "updated .mcp.json") {
		t.Errorf("install output %q", out)
	}
	installed := tree(t, ws)
	var settings struct {
		Permissions json.RawMessage
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
		Model string
	}
	if err := json.Unmarshal([]byte(installed[".claude/settings.json"]), &settings); err != nil {
		t.Fatal(err)
	}
	pre := settings.Hooks["PreToolUse"]
	if len(pre) != 2 || pre[0].Hooks[0].Command != "./scripts/check-bash.sh" || pre[1].Hooks[0].Command != "intentgate hook claude-code" {
		t.Errorf("PreToolUse = %+v, want the user's hook then ours", pre)
	}
	for _, ev := range []string{"PostToolUse", "SessionStart", "UserPromptSubmit"} {
		if hs := settings.Hooks[ev]; len(hs) != 1 || hs[0].Hooks[0].Command != "intentgate hook claude-code" {
			t.Errorf("%s = %+v", ev, hs)
		}
	}
	s := installed[".claude/settings.json"]
	order := []string{`"permissions"`, `"hooks"`, `"PreToolUse"`, `"Notification"`, `"notify-send \"Claude <needs> you\""`, `"model"`, `"env"`, `"RATIO": 1.50`}
	last := -1
	for _, k := range order {
		i := strings.Index(s, k)
		if i < last {
			t.Errorf("%s is missing or out of order in:\n%s", k, s)
		}
		last = i
	}
	var mcp struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		}
	}
	if err := json.Unmarshal([]byte(installed[".mcp.json"]), &mcp); err != nil {
		t.Fatal(err)
	}
	if m := mcp.MCPServers["intentgate"]; m.Command != "intentgate" || strings.Join(m.Args, " ") != "mcp" || mcp.MCPServers["github"].Command != "gh-mcp" {
		t.Errorf(".mcp.json = %+v", mcp)
	}

	out = mustCLI(t, "install", "claude-code", "-w", ws)
	if strings.Count(out, "unchanged") != 2 {
		t.Errorf("second install: %q, want both files unchanged", out)
	}
	sameTree(t, "after a second install", installed, tree(t, ws))

	mustCLI(t, "uninstall", "claude-code", "-w", ws)
	sameTree(t, "after uninstall", original, tree(t, ws))
}

func TestInstallFreshAndUninstallRemovesAll(t *testing.T) {
	t.Parallel()
	for _, agent := range install.Agents {
		t.Run(agent, func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
			original := tree(t, ws)
			out := mustCLI(t, "install", agent, "-w", ws, "--dry-run")
			if !strings.Contains(out, "--- /dev/null") {
				t.Errorf("dry-run of a fresh install: %q", out)
			}
			sameTree(t, "after --dry-run", original, tree(t, ws))
			mustCLI(t, "install", agent, "-w", ws)
			installed := tree(t, ws)
			if len(installed) <= len(original) {
				t.Fatalf("install wrote nothing: %v", installed)
			}
			if out := mustCLI(t, "install", agent, "-w", ws); strings.Contains(out, "updated") || strings.Contains(out, "created") {
				t.Errorf("second install changed something: %q", out)
			}
			out = mustCLI(t, "uninstall", agent, "-w", ws, "--dry-run")
			if !strings.Contains(out, "+++ /dev/null") {
				t.Errorf("dry-run of uninstall: %q", out)
			}
			sameTree(t, "after uninstall --dry-run", installed, tree(t, ws))
			mustCLI(t, "uninstall", agent, "-w", ws)
			sameTree(t, "after uninstall", original, tree(t, ws))
		})
	}
}

const userCodexConfig = `# my codex settings
model = "gpt-5-codex"   # keep this comment

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]

[profiles.fast]
model_reasoning_effort = "low"`

func TestInstallCodexTOML(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".codex"), 0o755)
	cfg := filepath.Join(ws, ".codex", "config.toml")
	os.WriteFile(cfg, []byte(userCodexConfig), 0o644)
	original := tree(t, ws)

	mustCLI(t, "install", "codex", "-w", ws)
	got, _ := os.ReadFile(cfg)
	if !strings.HasPrefix(string(got), codexSandboxBlock+userCodexConfig+"\n") || !strings.Contains(string(got), "[mcp_servers.intentgate]\ncommand = \"intentgate\"\nargs = [\"mcp\"]\n") {
		t.Errorf("config.toml after install:\n%s", got)
	}
	hooks, _ := os.ReadFile(filepath.Join(ws, ".codex", "hooks.json"))
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(hooks, &doc); err != nil || len(doc) != 1 || doc["hooks"] == nil {
		t.Errorf("hooks.json root must hold only \"hooks\": %s", hooks)
	}
	if out := mustCLI(t, "install", "codex", "-w", ws); strings.Contains(out, "updated") {
		t.Errorf("second install: %q", out)
	}
	mustCLI(t, "uninstall", "codex", "-w", ws)
	sameTree(t, "after uninstall", original, tree(t, ws))

	// A broken file is named with its line and column, and left alone.
	os.WriteFile(cfg, []byte("model = \"x\"\n[mcp_servers\n"), 0o644)
	out, err := runCLI(t, "", "install", "codex", "-w", ws)
	if err == nil || !strings.Contains(out, "config.toml:2:") {
		t.Errorf("broken config.toml: %v %q", err, out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "model = \"x\"\n[mcp_servers\n" {
		t.Errorf("install touched a broken config.toml: %q", b)
	}
	// An inline table cannot be extended: refused, not broken.
	os.WriteFile(cfg, []byte("mcp_servers = { docs = { command = \"d\" } }\n"), 0o644)
	if out, err := runCLI(t, "", "install", "codex", "-w", ws); err == nil || !strings.Contains(out, "by hand") {
		t.Errorf("inline mcp_servers: %v %q", err, out)
	}
	// A server of the person's own named intentgate is theirs.
	own := "[mcp_servers.intentgate]\ncommand = \"/opt/intentgate-dev\"\nargs = [\"mcp\", \"-v\"]\n"
	os.WriteFile(cfg, []byte(own), 0o644)
	out = mustCLI(t, "install", "codex", "-w", ws)
	if b, _ := os.ReadFile(cfg); string(b) != codexSandboxBlock+own || !strings.Contains(out, "already configures an MCP server named intentgate") {
		t.Errorf("own intentgate server: %q, %q", b, out)
	}
}

func TestInstallGeminiKeepsSettings(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	settings := "{\n\t\"theme\": \"GitHub\",\n\t\"mcpServers\": {\n\t\t\"intentgate\": {\n\t\t\t\"command\": \"/opt/bin/intentgate\",\n\t\t\t\"args\": [\"mcp\"]\n\t\t}\n\t}\n}"
	os.MkdirAll(filepath.Join(ws, ".gemini"), 0o755)
	p := filepath.Join(ws, ".gemini", "settings.json")
	os.WriteFile(p, []byte(settings), 0o644)
	mustCLI(t, "install", "gemini", "-w", ws)
	b, _ := os.ReadFile(p)
	var doc struct {
		Theme      string
		MCPServers map[string]struct{ Command string }
		Hooks      map[string][]struct {
			Matcher string
			Hooks   []struct{ Name, Type, Command string }
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	bt := doc.Hooks["BeforeTool"]
	if doc.Theme != "GitHub" || len(bt) != 1 || bt[0].Hooks[0].Name != "intentgate" || bt[0].Matcher != ".*" {
		t.Errorf("settings.json after install:\n%s", b)
	}
	if !strings.Contains(string(b), "\n\t\"theme\"") {
		t.Errorf("the file's tab indentation was not kept:\n%s", b)
	}
	// The person's own intentgate entry stays as it is, through uninstall too.
	if doc.MCPServers["intentgate"].Command != "/opt/bin/intentgate" {
		t.Errorf("the person's own intentgate MCP entry changed: %+v", doc.MCPServers)
	}
	mustCLI(t, "uninstall", "gemini", "-w", ws)
	if b, _ := os.ReadFile(p); string(b) != settings {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", b, settings)
	}
}

func TestInstallClineScripts(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Cline's hook scripts are shell scripts")
	}
	ws := t.TempDir()
	own := "#!/bin/sh\necho '{\"cancel\": false}'\n"
	os.MkdirAll(filepath.Join(ws, ".clinerules", "hooks"), 0o755)
	os.WriteFile(filepath.Join(ws, ".clinerules", "hooks", "TaskStart"), []byte(own), 0o755)
	original := tree(t, ws)
	out := mustCLI(t, "install", "cline", "-w", ws)
	if !strings.Contains(out, "TaskStart exists and is not intentgate's") {
		t.Errorf("install output %q, want a note about the person's TaskStart", out)
	}
	fi, err := os.Stat(filepath.Join(ws, ".clinerules", "hooks", "PreToolUse"))
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("PreToolUse: %v %v, want an executable", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, ".clinerules", "hooks", "PreToolUse"))
	if !strings.HasSuffix(string(b), "\nexec intentgate hook cline\n") {
		t.Errorf("PreToolUse script:\n%s", b)
	}
	mustCLI(t, "uninstall", "cline", "-w", ws)
	sameTree(t, "after uninstall", original, tree(t, ws))
}

func TestInstallGlobal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{\n  \"numStartups\": 3,\n  \"projects\": {}\n}\n"), 0o644)
	original := tree(t, home)
	if out, err := runCLI(t, home, "install", "claude-code", "--global"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if !strings.Contains(string(b), `"command": "intentgate hook claude-code --only-governed"`) {
		t.Errorf("~/.claude/settings.json:\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(home, ".claude.json"))
	if !strings.Contains(string(b), `"numStartups": 3`) || !strings.Contains(string(b), `"intentgate": {`) {
		t.Errorf("~/.claude.json:\n%s", b)
	}
	if out, err := runCLI(t, home, "uninstall", "claude-code", "--global"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	sameTree(t, "after uninstall --global", original, tree(t, home))
}

// The hook command install writes is one the agent can run: here through
// the shell, as Claude Code runs it, against a governed workspace.
func TestInstalledHookRuns(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("runs the command through sh")
	}
	e := newHookEnv(t, "claude-code", nil)
	mustCLI(t, "install", "claude-code", "-w", e.ws, "--command", e2eBinary(t))
	b, _ := os.ReadFile(e.path(".claude/settings.json"))
	var s struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	command := s.Hooks["PreToolUse"][0].Hooks[0].Command
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = e.ws
	cmd.Stdin = bytes.NewReader(e.payload("PreToolUse-Write", nil))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if d := claudeDeny(t, hookOut{stdout: string(out)}); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("%s answered %+v", command, d)
	}
	// The settings file is protected from the agent it configures.
	if d := claudeDeny(t, e.send("PreToolUse-Write", map[string]any{"tool_input.file_path": e.path(".claude/settings.json")})); d.Code != "NO_ACTIVE_INTENT" && d.Code != "PROTECTED_PATH" {
		t.Errorf("write to .claude/settings.json: %+v", d)
	}
}
