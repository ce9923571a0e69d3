package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/sandbox"
)

// requireConfinement fails under CI=true when this machine cannot confine
// commands with namespaces and Landlock (CI machines can), and skips
// elsewhere.
func requireConfinement(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the confinement tests are Linux's")
	}
	if m, why := sandbox.Available(); m != sandbox.Namespaces {
		msg := fmt.Sprintf("commands are confined by %q here, not by namespaces and Landlock: %s", m, why)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// runExecBin runs `intentgate exec` in dir and returns its output and status.
func runExecBin(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), append([]string{"exec"}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

const execIntents = `active_intents:
  - id: INT-001
    name: auth
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-002
    name: everything
    status: IN_PROGRESS
    owned_scope: ["**"]
`

func execWorkspace(t *testing.T) string {
	t.Helper()
	ws := e2eWorkspace(t, execIntents, map[string]string{
		"src/a.go":              "package a\n",
		"docs/readme.md":        "docs\n",
		".claude/settings.json": "{}\n",
		"src/x/.orchestration/active_intents.yaml": "active_intents: []\n",
	})
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

func selectIntent(t *testing.T, ws, session, intent string) {
	t.Helper()
	s := startDispatch(t, ws, session)
	if r := s.call("select_active_intent", map[string]any{"intent_id": intent}); !r.OK {
		t.Fatalf("select_active_intent %s: %+v", intent, r)
	}
}

func TestExecWritesOnlyBeneathTheIntentsRoots(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := execWorkspace(t)
	outside := t.TempDir()
	selectIntent(t, ws, "s1", "INT-001")
	out, code := runExecBin(t, ws, "--session", "s1", "--", "sh", "-c", fmt.Sprintf(`
		echo new > src/b.go && echo WROTE-SRC
		echo x > docs/readme.md || echo REFUSED-DOCS
		echo x >> .orchestration/active_intents.yaml || echo REFUSED-INTENTS
		echo x > %s/f || echo REFUSED-OUTSIDE
		exit 3`, outside))
	if code != 3 {
		t.Errorf("exit status %d, want the command's 3; output:\n%s", code, out)
	}
	for _, want := range []string{"WROTE-SRC", "REFUSED-DOCS", "REFUSED-INTENTS", "REFUSED-OUTSIDE", "Permission denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "docs/readme.md")); string(b) != "docs\n" {
		t.Errorf("docs/readme.md = %q, want it unchanged", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".orchestration/active_intents.yaml")); string(b) != execIntents {
		t.Errorf("active_intents.yaml changed:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("a file outside the workspace was written")
	}

	// Without a session (or before it selected an intent) nothing in the
	// workspace is writable.
	out, _ = runExecBin(t, ws, "--", "sh", "-c", "echo x > src/c.go || echo REFUSED")
	if !strings.Contains(out, "REFUSED") {
		t.Errorf("a write without a session was allowed:\n%s", out)
	}
}

func TestExecGovernanceReadOnlyUnderWideScope(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := execWorkspace(t)
	selectIntent(t, ws, "wide", "INT-002")
	targets := []string{".orchestration/active_intents.yaml", ".orchestration/agent_trace.jsonl",
		".claude/settings.json", "src/x/.orchestration/active_intents.yaml", ".orchestration/sessions/wide.json"}
	before := map[string]string{}
	var script strings.Builder
	for _, p := range targets {
		b, _ := os.ReadFile(filepath.Join(ws, p))
		before[p] = string(b)
		fmt.Fprintf(&script, "echo '  - id: X' >> %q || echo REFUSED\n", p)
	}
	script.WriteString("echo '#!/bin/sh' > .git/hooks/pre-commit || echo REFUSED-HOOK\n")
	script.WriteString("rm -rf .orchestration/sessions || echo REFUSED-RM\n")
	script.WriteString("echo ok > top.txt && echo WROTE-TOP\n")
	out, _ := runExecBin(t, ws, "--session", "wide", "--", "sh", "-c", script.String())
	for p, b := range before {
		if got, _ := os.ReadFile(filepath.Join(ws, p)); string(got) != b {
			t.Errorf("%s changed under scope **:\n%s", p, got)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
		t.Error(".git/hooks/pre-commit was planted")
	}
	if !strings.Contains(out, "WROTE-TOP") || !strings.Contains(out, "Read-only file system") {
		t.Errorf("want a write in scope and EROFS on governance files; output:\n%s", out)
	}
}

func TestExecSurvivorsAreGone(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := execWorkspace(t)
	selectIntent(t, ws, "s1", "INT-001")
	token := fmt.Sprintf("exec-survivor-%d", time.Now().UnixNano())
	out, code := runExecBin(t, ws, "--session", "s1", "--", "sh", "-c", fmt.Sprintf(
		`setsid sh -c 'sleep 2; echo x > src/f # %[1]s' </dev/null >/dev/null 2>&1 &
		 ( sh -c 'sleep 2; echo y > src/g # %[1]s' </dev/null >/dev/null 2>&1 & ) &
		 echo started`, token))
	if code != 0 || !strings.Contains(out, "started") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	time.Sleep(3 * time.Second)
	for _, f := range []string{"src/f", "src/g"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("a process that outlived the command wrote %s", f)
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(token)) {
			t.Errorf("process %s remains: %q", e.Name(), b)
		}
	}
}

func TestExecRefusesOutsideAWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, code := runExecBin(t, dir, "--", "true")
	if code != 125 || !strings.Contains(out, "not in a governed workspace") {
		t.Errorf("exec outside a workspace: status %d, output %q; want 125 and the reason", code, out)
	}
}

// TestInstallClaudeSandbox: install turns on Claude Code's own sandbox with
// no unsandboxed fallback and every governance path denied to writes, and
// uninstall takes exactly that back.
func TestInstallClaudeSandbox(t *testing.T) {
	ws := t.TempDir()
	settings := filepath.Join(ws, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := `{"sandbox": {"filesystem": {"denyWrite": ["//etc/mine"]}}, "model": "x"}` + "\n"
	if err := os.WriteFile(settings, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, "install", "claude-code", "-w", ws)
	for _, want := range []string{"Claude Code: its own sandbox is on", "not guaranteed"} {
		if !strings.Contains(out, want) {
			t.Errorf("install said %q, want %q", out, want)
		}
	}
	var doc struct {
		Sandbox struct {
			Enabled           *bool `json:"enabled"`
			FailIfUnavailable *bool `json:"failIfUnavailable"`
			AllowUnsandboxed  *bool `json:"allowUnsandboxedCommands"`
			Filesystem        struct {
				DenyWrite []string `json:"denyWrite"`
			} `json:"filesystem"`
		} `json:"sandbox"`
	}
	data, _ := os.ReadFile(settings)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	sb := doc.Sandbox
	if sb.Enabled == nil || !*sb.Enabled || sb.FailIfUnavailable == nil || !*sb.FailIfUnavailable || sb.AllowUnsandboxed == nil || *sb.AllowUnsandboxed {
		t.Errorf("sandbox settings:\n%s", data)
	}
	for _, g := range append([]string{"etc/mine", ".claude/settings.json"}, slices.DeleteFunc(slices.Clone(sandbox.GovernanceNames), func(s string) bool { return s == ".claude" })...) {
		want := "/" + filepath.ToSlash(filepath.Join(ws, g))
		if g == "etc/mine" {
			want = "//etc/mine"
		}
		if !slices.Contains(sb.Filesystem.DenyWrite, want) {
			t.Errorf("denyWrite %q lacks %q", sb.Filesystem.DenyWrite, want)
		}
	}
	for _, agent := range []string{"codex", "gemini"} {
		if out := mustCLI(t, "install", agent, "-w", ws); !strings.Contains(out, "not guaranteed") {
			t.Errorf("install %s does not say what it cannot guarantee: %q", agent, out)
		}
	}
	mustCLI(t, "uninstall", "claude-code", "-w", ws)
	data, _ = os.ReadFile(settings)
	var back, orig any
	_ = json.Unmarshal(data, &back)
	_ = json.Unmarshal([]byte(mine), &orig)
	if fmt.Sprint(back) != fmt.Sprint(orig) {
		t.Errorf("uninstall left\n%s\nwant the person's own settings\n%s", data, mine)
	}
}
