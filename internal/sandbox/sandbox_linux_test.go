//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireMechanism fails under CI=true when the kernel cannot confine
// commands the way CI machines must (Landlock and user namespaces), and skips
// elsewhere.
func requireMechanism(t *testing.T, want Mechanism) {
	t.Helper()
	got, why := probe()
	if got == want || (want == LandlockOnly && got != None) {
		return
	}
	msg := fmt.Sprintf("commands are confined by %q here, the test needs %q: %s", got, want, why)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// modes are the Linux mechanisms the confinement tests run under.
var modes = []Mechanism{Namespaces, LandlockOnly}

func withMechanism(t *testing.T, m Mechanism) {
	requireMechanism(t, m)
	old := forceMech
	forceMech = m
	t.Cleanup(func() { forceMech = old })
}

type fixture struct {
	ws      string
	outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string]string{
		".orchestration/active_intents.yaml":       "active_intents:\n  - id: INT-001\n    owned_scope: [\"src/**\"]\n",
		".orchestration/agent_trace.jsonl":         "{}\n",
		".git/hooks/pre-commit.sample":             "#!/bin/sh\n",
		".git/config":                              "[core]\n",
		".claude/settings.json":                    "{}\n",
		".intentignore":                            "secret/\n",
		".mcp.json":                                "{}\n",
		"src/main.go":                              "package main\n",
		"src/x/.orchestration/active_intents.yaml": "active_intents: []\n",
		"docs/readme.md":                           "docs\n",
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{ws: ws, outside: out}
}

func (f fixture) run(t *testing.T, scope []string, script string) (string, int) {
	t.Helper()
	p, err := ForScope(f.ws, scope, Config{WritableOutside: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, cleanup, err := Shell(ctx, p, f.ws, script)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %q: %v", script, err)
	}
	if code == initFailed {
		t.Fatalf("the sandbox could not be set up: %s", out.String())
	}
	return out.String(), code
}

func TestConfinedWrites(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			withMechanism(t, m)
			f := newFixture(t)
			out, code := f.run(t, []string{"src/**"}, fmt.Sprintf(`
				set +e
				echo in >> src/main.go && echo WROTE-IN-SCOPE
				echo out > docs/readme.md || echo REFUSED-DOCS
				echo out > top.txt || echo REFUSED-TOP
				echo out > %s/escaped.txt || echo REFUSED-OUTSIDE
				echo tmp > "$TMPDIR/t" && echo WROTE-TMP
				rm -f docs/readme.md || echo REFUSED-RM
				echo x > /dev/null && echo DEVNULL-OK
				cat docs/readme.md
			`, f.outside))
			if code != 0 {
				t.Fatalf("exit code %d, output:\n%s", code, out)
			}
			for _, want := range []string{"WROTE-IN-SCOPE", "REFUSED-DOCS", "REFUSED-TOP", "REFUSED-OUTSIDE", "WROTE-TMP", "REFUSED-RM", "DEVNULL-OK", "Permission denied"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			// (Under Landlock alone, src itself is not writable: it holds
			// src/x/.orchestration, so only its other entries are.)
			if b, _ := os.ReadFile(filepath.Join(f.ws, "src/main.go")); string(b) != "package main\nin\n" {
				t.Errorf("src/main.go = %q, want the command's write", b)
			}
			if b, _ := os.ReadFile(filepath.Join(f.ws, "docs/readme.md")); string(b) != "docs\n" {
				t.Errorf("docs/readme.md = %q, want it unchanged", b)
			}
			for _, p := range []string{filepath.Join(f.ws, "top.txt"), filepath.Join(f.outside, "escaped.txt")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

func TestGovernanceReadOnlyUnderWideScope(t *testing.T) {
	targets := []string{
		".orchestration/active_intents.yaml", ".orchestration/agent_trace.jsonl", ".git/config",
		".claude/settings.json", ".intentignore", ".mcp.json", "src/x/.orchestration/active_intents.yaml",
	}
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			withMechanism(t, m)
			f := newFixture(t)
			before := map[string][]byte{}
			var script strings.Builder
			script.WriteString("set +e\n")
			for _, p := range targets {
				before[p], _ = os.ReadFile(filepath.Join(f.ws, p))
				fmt.Fprintf(&script, "echo '- id: X\n  owned_scope: [\"**\"]' >> %q || echo REFUSED-APPEND\n", p)
				fmt.Fprintf(&script, "rm -f %q || echo REFUSED-RM\n", p)
				fmt.Fprintf(&script, "echo forged > /tmp/x.$$ 2>/dev/null; mv -f \"$TMPDIR/none\" %q 2>/dev/null; echo forged > %q.new && mv -f %q.new %q || echo REFUSED-MV\n", p, p, p, p)
			}
			script.WriteString("echo hook > .git/hooks/pre-commit || echo REFUSED-HOOK\n")
			script.WriteString("mv .orchestration .orch-moved || echo REFUSED-DIRMOVE\n")
			script.WriteString("rm -rf src/x/.orchestration || echo REFUSED-NESTED-RM\n")
			script.WriteString("echo ok > src/ok.txt && echo WROTE-SRC\n")
			out, _ := f.run(t, []string{"**"}, script.String())
			for p, b := range before {
				if got, err := os.ReadFile(filepath.Join(f.ws, p)); err != nil || !bytes.Equal(got, b) {
					t.Errorf("%s changed under scope **: %q, %v (want %q)", p, got, err, b)
				}
			}
			if _, err := os.Stat(filepath.Join(f.ws, ".git/hooks/pre-commit")); err == nil {
				t.Errorf(".git/hooks/pre-commit was planted")
			}
			if _, err := os.Stat(filepath.Join(f.ws, ".orch-moved")); err == nil {
				t.Errorf(".orchestration was moved")
			}
			if m == Namespaces {
				if !strings.Contains(out, "WROTE-SRC") {
					t.Errorf("a write in scope failed under **:\n%s", out)
				}
				if !strings.Contains(out, "Read-only file system") {
					t.Errorf("the command's output does not say the file system is read-only:\n%s", out)
				}
			}
			for _, want := range []string{"REFUSED-APPEND", "REFUSED-RM", "REFUSED-HOOK", "REFUSED-DIRMOVE"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// survivors lists the processes whose command line holds token.
func survivors(token string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(token)) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func TestSurvivorsDieWithTheCommand(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			withMechanism(t, m)
			f := newFixture(t)
			token := fmt.Sprintf("survivor-%d-%s", time.Now().UnixNano(), m)
			script := fmt.Sprintf(`
				setsid sh -c 'sleep 2; echo x > src/setsid.txt # %[1]s' </dev/null >/dev/null 2>&1 &
				( sh -c 'sleep 2; echo y > src/double.txt # %[1]s' </dev/null >/dev/null 2>&1 & ) &
				nohup sh -c 'trap "" HUP TERM; sleep 2; echo z > src/nohup.txt # %[1]s' </dev/null >/dev/null 2>&1 &
				echo started
			`, token)
			out, code := f.run(t, []string{"src/**"}, script)
			if code != 0 || !strings.Contains(out, "started") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if s := survivors(token); len(s) > 0 {
				t.Errorf("processes outlived the command:\n%s", strings.Join(s, "\n"))
			}
			time.Sleep(3 * time.Second)
			for _, name := range []string{"setsid.txt", "double.txt", "nohup.txt"} {
				if _, err := os.Stat(filepath.Join(f.ws, "src", name)); err == nil {
					t.Errorf("a survivor wrote src/%s after the command returned", name)
				}
			}
			if s := survivors(token); len(s) > 0 {
				t.Errorf("processes remain 3 s after the command:\n%s", strings.Join(s, "\n"))
			}
		})
	}
}

func TestTimeoutKillsTheTree(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			withMechanism(t, m)
			f := newFixture(t)
			token := fmt.Sprintf("timeout-%d", time.Now().UnixNano())
			p, err := ForScope(f.ws, []string{"src/**"}, Config{WritableOutside: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			cmd, cleanup, err := Shell(ctx, p, f.ws, fmt.Sprintf(
				"setsid sh -c 'sleep 3; echo x > src/late.txt # %s' & sleep 30 # %s", token, token))
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			if err := cmd.Run(); err == nil {
				t.Fatal("the command was not stopped at the timeout")
			}
			if s := survivors(token); len(s) > 0 {
				t.Errorf("processes outlived the timeout:\n%s", strings.Join(s, "\n"))
			}
			time.Sleep(3500 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(f.ws, "src/late.txt")); err == nil {
				t.Error("a process of the stopped command wrote src/late.txt")
			}
		})
	}
}

func TestGoTestUnderConfinement(t *testing.T) {
	requireMechanism(t, Namespaces)
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go is not on PATH")
		}
		t.Skip("go is not on PATH")
	}
	f := newFixture(t)
	mod := map[string]string{
		"src/mod/go.mod":    "module example.com/m\n\ngo 1.21\n",
		"src/mod/m.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"src/mod/m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
	}
	for name, content := range mod {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ForScope(f.ws, []string{"src/**"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, cleanup, err := Command(ctx, p, filepath.Join(f.ws, "src/mod"), []string{goBin, "test", "-count=1", "./..."})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	cmd.Env = append(cmd.Env, "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("ok")) {
		t.Fatalf("go test under confinement: %v\n%s", err, out)
	}
}

func TestNpmInstallUnderConfinement(t *testing.T) {
	requireMechanism(t, Namespaces)
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npm is not on PATH")
		}
		t.Skip("npm is not on PATH")
	}
	f := newFixture(t)
	files := map[string]string{
		"src/app/package.json": `{"name":"app","version":"1.0.0","dependencies":{"lib":"file:../lib"}}`,
		"src/lib/package.json": `{"name":"lib","version":"1.0.0","main":"index.js"}`,
		"src/lib/index.js":     "module.exports = 42;\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ForScope(f.ws, []string{"src/**"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, cleanup, err := Command(ctx, p, filepath.Join(f.ws, "src/app"),
		[]string{npm, "install", "--no-audit", "--no-fund", "--offline"})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm install under confinement: %v\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "src/app/node_modules/lib")); err != nil {
		t.Fatalf("node_modules/lib is missing after npm install: %v\n%s", err, out)
	}
}

func TestUnavailableRefuses(t *testing.T) {
	old := forceMech
	forceMech = None
	defer func() { forceMech = old }()
	p := &Policy{Workspace: t.TempDir()}
	if _, _, err := Shell(context.Background(), p, p.Workspace, "true"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Shell without confinement = %v, want ErrUnavailable", err)
	}
	p.AllowUnconfined = true
	cmd, cleanup, err := Shell(context.Background(), p, p.Workspace, "true")
	if err != nil {
		t.Fatalf("Shell with allow_unconfined: %v", err)
	}
	defer cleanup()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTrue is the cost of confinement per command:
// go test -run '^$' -bench True ./internal/sandbox
func BenchmarkTrue(b *testing.B) {
	ws := b.TempDir()
	p, err := ForScope(ws, []string{"**"}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []Mechanism{None, LandlockOnly, Namespaces} {
		b.Run(string(m), func(b *testing.B) {
			if got, _ := probe(); got == None || (m == Namespaces && got != Namespaces) {
				b.Skip("unavailable here")
			}
			old := forceMech
			forceMech = m
			defer func() { forceMech = old }()
			pol := *p
			pol.AllowUnconfined = true
			for b.Loop() {
				cmd, cleanup, err := Command(context.Background(), &pol, ws, []string{"/bin/true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				cleanup()
			}
		})
	}
}

// TestHiddenAndNetwork: a hidden directory is empty inside the command; with
// NoNetwork the command's network namespace has the loopback interface only,
// up; without namespaces NoNetwork refuses the command.
func TestHiddenAndNetwork(t *testing.T) {
	withMechanism(t, Namespaces)
	f := newFixture(t)
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := ForScope(f.ws, []string{"src/**"}, Config{WritableOutside: []string{}, Network: NetworkDeny})
	if err != nil {
		t.Fatal(err)
	}
	p.Hide(secret, filepath.Join(secret, "missing"))
	if len(p.Hidden) != 1 {
		t.Fatalf("Hidden = %v, want the one directory that exists", p.Hidden)
	}
	cmd, cleanup, err := Shell(context.Background(), p, f.ws,
		fmt.Sprintf("ls -A %q | wc -l; cat %q/key || echo NO-KEY; grep -c : /proc/net/dev; cat /sys/class/net/lo/operstate 2>/dev/null; ip -o link 2>/dev/null | grep -c UP || true", secret, secret))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 || lines[0] != "0" || !strings.Contains(string(out), "NO-KEY") || strings.Contains(string(out), "0123456789") {
		t.Errorf("the hidden directory shows inside the command:\n%s", out)
	}
	if !strings.Contains(string(out), "\n1\n") {
		t.Errorf("/proc/net/dev inside the command should list lo only:\n%s", out)
	}

	withMechanism(t, LandlockOnly)
	if _, _, err := Shell(context.Background(), p, f.ws, "true"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("NoNetwork without namespaces = %v, want ErrUnavailable", err)
	}
}

// TestNoCapabilitiesLeft: the command holds no capability, not even
// inheritable ones (from which a command running as uid 0 in its user
// namespace got CAP_SYS_ADMIN, CAP_SETPCAP and CAP_NET_ADMIN back), and runs
// with no_new_privs. With Landlock alone a command of root's has an empty
// bounding set too; another user's keeps its bounding set, which no_new_privs
// makes useless to it.
func TestNoCapabilitiesLeft(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			withMechanism(t, m)
			f := newFixture(t)
			out, code := f.run(t, []string{"src/**"}, "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 6 {
				t.Fatalf("want the 5 capability sets and NoNewPrivs:\n%s", out)
			}
			for _, line := range lines {
				name, value, _ := strings.Cut(line, ":")
				value = strings.TrimSpace(value)
				want := "0000000000000000"
				switch {
				case name == "NoNewPrivs":
					want = "1"
				case name == "CapBnd" && m == LandlockOnly && os.Geteuid() != 0:
					continue
				}
				if value != want {
					t.Errorf("%s: %s, want %s", name, value, want)
				}
			}
		})
	}
}
