package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/internal/anchortest"
	"github.com/intentgate/intentgate/internal/selfexe"
	"github.com/intentgate/intentgate/orchestration"
)

func TestMain(m *testing.M) {
	code := anchortest.Main(m, orchestration.AnchorDirEnv)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// heavy are the packages intentgate leaves to intentgate-full: their
// initialisation alone made a hook process several times as slow to start
// as a Go program that reads stdin and prints JSON.
var heavy = []string{
	"github.com/intentgate/intentgate/agent",
	"github.com/intentgate/intentgate/tools",
	"github.com/intentgate/intentgate/orchestration/audit",
	"github.com/intentgate/intentgate/internal/agentrun",
	"github.com/intentgate/intentgate/internal/mcpserver",
	"github.com/intentgate/intentgate/internal/gate",
	"github.com/google/jsonschema-go",
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/go-git/go-git",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
	"github.com/chromedp",
	"github.com/ledongthuc/pdf",
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"encoding/gob",
	"golang.org/x/crypto/ssh",
	"net/http",
	"crypto/tls",
	"html/template",
}

// allowed are the light packages below a heavy path, as in intentgate-hook.
var allowed = []string{
	"github.com/intentgate/intentgate/tools/picture",
	"github.com/intentgate/intentgate/orchestration/audit/snap",
}

// intentgate links what a hook event needs and no more: none of the heavy
// packages comes back through a new import.
func TestLinksNoHeavyPackage(t *testing.T) {
	for _, goos := range []string{runtime.GOOS, "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (GOOS=%s): %v", goos, err)
		}
		for _, d := range strings.Fields(string(out)) {
			if slices.Contains(allowed, d) {
				continue
			}
			for _, h := range heavy {
				if d == h || strings.HasPrefix(d, h+"/") {
					t.Errorf("GOOS=%s: intentgate links %s (under %s); find the import with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/intentgate | grep %s", goos, d, h, d)
				}
			}
		}
	}
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds intentgate and intentgate-full side by side, as
// `go install ./cmd/...` puts them, and returns their directory.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "intentgate-front-"); buildErr != nil {
			return
		}
		for name, pkg := range map[string]string{"intentgate": ".", "intentgate-full": "../intentgate-full"} {
			if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), pkg).CombinedOutput(); err != nil {
				buildErr = &buildError{"go build " + pkg, err, out}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

type buildError struct {
	what string
	err  error
	out  []byte
}

func (e *buildError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, dir, stdin, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "INTENTGATE_NO_DAEMON=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return result{out.String(), errw.String(), code}
}

// workspace is a git repository with intentgate's files, made by init.
func workspace(t *testing.T, full string) string {
	t.Helper()
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		t.Skipf("git init: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "", full, "init"); r.code != 0 {
		t.Fatalf("intentgate-full init: status %d\n%s", r.code, r.stderr)
	}
	return ws
}

// A command intentgate does not answer itself runs in intentgate-full with
// the same arguments, standard streams and exit status: what a user sees is
// what intentgate-full run directly shows (and so for --version, which
// intentgate answers itself).
func TestRunsFullForOtherCommands(t *testing.T) {
	dir := binaries(t)
	front, full := filepath.Join(dir, "intentgate"), filepath.Join(dir, "intentgate-full")
	call := `{"id":"1","session":"s","tool":"read_file","args":{"path":"README.md"}}` + "\n"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string // in stdout or stderr
		code  int
	}{
		{"version", "", []string{"--version"}, "intentgate version", 0},
		{"version, shorthand", "", []string{"-v"}, "intentgate version", 0},
		{"version with a value", "", []string{"--version=true"}, "intentgate version", 0},
		{"root help", "", []string{"--help"}, "intentgate demo", 0},
		{"hook help", "", []string{"hook", "--help"}, "--only-governed", 0},
		{"hook flag the tree rejects", "", []string{"hook", "claude-code", "-w=x", "--bogus"}, "unknown flag: --bogus", 1},
		{"hook with two agents", "", []string{"hook", "claude-code", "codex"}, "accepts 1 arg(s), received 2", 1},
		{"unknown command", "", []string{"no-such-command"}, `unknown command "no-such-command"`, 1},
		{"dispatch reads stdin", call, []string{"dispatch", "--workspace", "."}, `{"id":"1","ok":true,"output":"1 | hello\n"}`, 0},
		{"trace verify without a ledger", "", []string{"trace", "verify"}, "agent_trace.jsonl", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, workspace(t, full), tc.stdin, front, tc.args...)
			want := run(t, workspace(t, full), tc.stdin, full, tc.args...)
			if got != want {
				t.Errorf("intentgate %q = %+v\nintentgate-full gives %+v", tc.args, got, want)
			}
			if got.code != tc.code || !strings.Contains(got.stdout+got.stderr, tc.want) {
				t.Errorf("intentgate %q = %+v, want status %d and %q", tc.args, got, tc.code, tc.want)
			}
		})
	}
}

// intentgate answers a hook event itself, as intentgate-full's hook
// command does: the same answer, errors and exit status.
func TestHookAnswersAsFull(t *testing.T) {
	dir := binaries(t)
	front, full := filepath.Join(dir, "intentgate"), filepath.Join(dir, "intentgate-full")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"read", []string{"hook", "claude-code"}, 0},
		{"unknown agent", []string{"hook", "nope"}, 2},
		{"only governed", []string{"hook", "claude-code", "--only-governed"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rs []result
			for _, bin := range []string{front, full} {
				ws := workspace(t, full)
				ev := `{"session_id":"s1","cwd":"` + filepath.ToSlash(ws) + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_use_id":"t1","tool_input":{"file_path":"` + filepath.ToSlash(filepath.Join(ws, "README.md")) + `"}}`
				r := run(t, ws, ev, bin, tc.args...)
				r.stdout = strings.ReplaceAll(r.stdout, filepath.ToSlash(ws), "WS")
				rs = append(rs, r)
			}
			if rs[0] != rs[1] {
				t.Errorf("intentgate %q = %+v\nintentgate-full gives %+v", tc.args, rs[0], rs[1])
			}
			if rs[0].code != tc.code {
				t.Errorf("intentgate %q: status %d, want %d\n%s", tc.args, rs[0].code, tc.code, rs[0].stderr)
			}
		})
	}
}

// Without intentgate-full beside it, intentgate still answers hook events,
// and any other command fails with the missing file and how to install it.
func TestFullMissing(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "intentgate")
	if out, err := exec.Command("go", "build", "-o", alone, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := run(t, t.TempDir(), "", alone, "trace", "verify")
	want := filepath.Join(filepath.Dir(alone), "intentgate-full") + " is missing"
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "go install ./cmd/...") {
		t.Errorf("intentgate trace verify alone = %+v, want status 1 naming %q and `go install ./cmd/...`", r, want)
	}
	if r := run(t, t.TempDir(), "{}", alone, "hook", "nope"); r.code != 2 || !strings.Contains(r.stderr, `unknown agent "nope"`) {
		t.Errorf("intentgate hook nope alone = %+v, want its own answer, status 2", r)
	}
}

// `go run ./cmd/intentgate` (the README's first command) builds intentgate
// alone: intentgate-full is then built in the user's cache, and the command
// runs. The second run finds intentgate in go's build cache, not in a
// temporary directory.
func TestGoRunBuildsFull(t *testing.T) {
	if testing.Short() {
		t.Skip("links intentgate-full")
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cache := t.TempDir()
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Unix but darwin
	t.Setenv("LocalAppData", cache)   // on Windows
	for i := range 2 {
		// intentgate answers --version itself; --help is the command
		// tree's, in intentgate-full.
		r := run(t, ".", "", "go", "run", ".", "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "dispatch") || !strings.Contains(r.stdout, "trace") {
			t.Errorf("go run . --help (run %d) = %+v, want the command tree's help", i+1, r)
		}
	}
	if runtime.GOOS != "darwin" {
		built, _ := filepath.Glob(filepath.Join(cache, "intentgate", "go-run", "*", selfexe.Exe(selfexe.FullName)))
		if len(built) != 1 {
			t.Errorf("intentgate-full built in the cache: %q, want one", built)
		}
	}
}
