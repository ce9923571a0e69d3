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

	"github.com/intentgate/intentgate/internal/anchortest"
	"github.com/intentgate/intentgate/orchestration"
)

func TestMain(m *testing.M) { os.Exit(anchortest.Main(m, orchestration.AnchorDirEnv)) }

// heavy are the packages a hook process must not link: the tool
// implementations and what only they need (browser, PDF, code index, MCP,
// model SDKs), the JSON Schema libraries, git libraries, HTTP, and the
// command-line framework. A path is heavy when it equals one or lies below it.
var heavy = []string{
	"github.com/intentgate/intentgate/tools", // the package itself; tools/picture is allowed below
	"github.com/intentgate/intentgate/agent",
	"github.com/intentgate/intentgate/internal/gate",
	"github.com/intentgate/intentgate/internal/catalog",    // spec is allowed below
	"github.com/intentgate/intentgate/orchestration/audit", // snap is allowed below
	"github.com/intentgate/intentgate/prompts",             // protocol is allowed below
	"github.com/intentgate/intentgate/internal/daemon",     // hookclient is allowed below
	"github.com/go-git",
	"encoding/gob",
	"github.com/google/jsonschema-go",
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/invopop/jsonschema",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
	"github.com/chromedp",
	"github.com/ledongthuc/pdf",
	"github.com/philippgille/chromem-go",
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"net/http",
	"crypto/tls",
	"html/template",
}

// allowed are the light packages below a heavy path.
var allowed = []string{
	"github.com/intentgate/intentgate/tools/picture",
	"github.com/intentgate/intentgate/internal/catalog/spec",
	"github.com/intentgate/intentgate/orchestration/audit/snap",
	"github.com/intentgate/intentgate/prompts/protocol",
	"github.com/intentgate/intentgate/internal/daemon/hookclient",
	"github.com/intentgate/intentgate/internal/gatecore",
}

// The lean hook program links only what answering an event needs: none of
// the heavy packages comes back through a new import.
func TestLinksNoHeavyPackage(t *testing.T) {
	for _, goos := range []string{runtime.GOOS, "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (GOOS=%s): %v", goos, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			if slices.Contains(allowed, d) {
				continue
			}
			for _, h := range heavy {
				if d == h || strings.HasPrefix(d, h+"/") {
					t.Errorf("GOOS=%s: intentgate-hook links %s (under %s); find the import with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/intentgate-hook | grep %s", goos, d, h, d)
				}
			}
		}
		if goos == runtime.GOOS {
			t.Logf("intentgate-hook links %d packages", len(deps))
		}
	}
}

// On Linux the lean hook program is a static executable even where cgo is
// on: it links neither package net (google/uuid brings it, for version 1
// node IDs; the daemon client dialed through it) nor anything else that
// needs cgo. A dynamically linked executable starts about a fifth slower
// (the dynamic loader, libc's thread start, glibc reading /proc/self/maps).
func TestLinksNoCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps (GOOS=linux CGO_ENABLED=1): %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		switch d {
		case "net", "runtime/cgo", "os/user", "plugin", "github.com/google/uuid":
			t.Errorf("intentgate-hook links %s, which makes it a cgo executable; find the import with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/intentgate-hook | grep -w %s", d, d)
		}
	}
}

var (
	buildOnce        sync.Once
	fullBin, leanBin string
	buildErr         error
)

// binaries builds intentgate, intentgate-full and intentgate-hook side by
// side, as `go install ./cmd/...` puts them.
func binaries(t *testing.T) (full, lean string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "intentgate-hook-bin-")
		if err != nil {
			buildErr = err
			return
		}
		fullBin, leanBin = filepath.Join(dir, "intentgate"), filepath.Join(dir, "intentgate-hook")
		// intentgate answers hook events itself and runs intentgate-full,
		// beside it, for the other commands (serve, init).
		for bin, pkg := range map[string]string{fullBin: "../intentgate", filepath.Join(dir, "intentgate-full"): "../intentgate-full", leanBin: "."} {
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return fullBin, leanBin
}

// placeholder is the workspace in the testdata payloads.
const placeholder = "/home/user/project"

const intents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**", "README.md", "out.txt"]
  - id: INT-009
    name: docs
    status: PENDING
    owned_scope: ["docs/**"]
`

// eventOrder puts a directory's events in the order an agent sends them:
// session start, prompt, then each tool's pre and post events; captured
// payloads are numbered already.
func eventOrder(names []string) {
	rank := func(n string) (int, string, int) {
		switch {
		case strings.HasPrefix(n, "SessionStart"), strings.HasPrefix(n, "TaskStart"):
			return 0, "", 0
		case strings.HasPrefix(n, "UserPromptSubmit"), strings.HasPrefix(n, "BeforeAgent"), strings.HasPrefix(n, "beforeSubmitPrompt"):
			return 1, "", 0
		case strings.HasPrefix(n, "Stop"), strings.HasPrefix(n, "stop"):
			return 3, "", 0
		}
		kind, tool, _ := strings.Cut(n, "-")
		post := 0
		if strings.HasPrefix(kind, "Post") || strings.HasPrefix(kind, "After") || strings.HasPrefix(kind, "after") {
			post = 1
		}
		return 2, tool, post
	}
	sort.SliceStable(names, func(i, j int) bool {
		a1, a2, a3 := rank(names[i])
		b1, b2, b3 := rank(names[j])
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		return a3 < b3
	})
}

// outcome is what a run of a directory's events left: every answer, exit
// status and stderr, and the ledger's records without what differs from
// run to run (ids, times, the hash chain).
type outcome struct {
	answers []string
	records []string
	files   map[string]string
}

// replay sends the events of dir, in order, to bin (with args before the
// agent) in a fresh workspace at ws.
func replay(t *testing.T, bin string, args []string, agent, dir, ws string, events []string) outcome {
	t.Helper()
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".orchestration/active_intents.yaml": intents,
		"src/a.txt":                          "alpha\nbeta\n",
		"src/app.go":                         "package app\n",
		"README.md":                          "# project\n",
		"docs/guide.md":                      "guide\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh ledger anchor per run: the ledger is new each time.
	if err := os.RemoveAll(ws + ".anchors"); err != nil {
		t.Fatal(err)
	}
	env := hookEnv(ws)
	var o outcome
	for _, name := range events {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		raw = bytes.ReplaceAll(raw, []byte(placeholder), []byte(ws))
		cmd := exec.Command(bin, append(slices.Clone(args), agent)...)
		cmd.Dir = filepath.Dir(ws)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(raw)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %s: %v", bin, name, err)
		}
		// Messages name the program: intentgate's errors start
		// "intentgate:", the lean program's "intentgate-hook:".
		errText := strings.ReplaceAll(stderr.String(), "intentgate-hook:", "intentgate:")
		o.answers = append(o.answers, fmt.Sprintf("%s: exit %d\nstdout: %s\nstderr: %s", name, code, stdout.String(), errText))
	}
	ledger, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(ledger), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		b, _ := json.Marshal(stable(rec))
		o.records = append(o.records, string(b))
	}
	o.files = map[string]string{}
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".orchestration/agent_trace.jsonl", strings.HasPrefix(rel, ".orchestration/sessions/"),
			strings.HasSuffix(rel, ".lock"), strings.HasPrefix(rel, ".orchestration/intent_map"):
			o.files[rel] = "(present)" // derived, with times in it
		default:
			b, _ := os.ReadFile(p)
			o.files[rel] = string(b)
		}
		return nil
	})
	return o
}

// hookEnv is the environment replay runs the hook programs in for the
// workspace ws: no daemon, the ledger anchors beside ws, and none of the
// caller's intentgate, git or agent project settings.
func hookEnv(ws string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "INTENTGATE_") || strings.HasSuffix(k, "_PROJECT_DIR") || strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "INTENTGATE_NO_DAEMON=1", orchestration.AnchorDirEnv+"="+ws+".anchors")
}

// stable drops what differs between two runs of the same events: record
// ids, times, and the hash chain over them.
func stable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			switch k {
			case "id", "timestamp", "prev", "prev_hash", "hash", "record_hash", "chain", "duration_ms", "ts":
				x[k] = "(varies)"
			default:
				x[k] = stable(vv)
			}
		}
	case []any:
		for i, vv := range x {
			x[i] = stable(vv)
		}
	}
	return v
}

// Every captured and testdata payload gets the same answer, exit status and
// stderr from intentgate-hook as from `intentgate hook`, and leaves the same
// ledger records and files, replayed in the same workspace.
func TestAnswersLikeIntentgateHook(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	full, lean := binaries(t)
	var dirs []string
	for _, root := range []string{"../intentgate-full/testdata/captured", "../intentgate-full/testdata/hooks"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") && !slices.Contains(dirs, filepath.Dir(p)) {
				dirs = append(dirs, filepath.Dir(p))
			}
			return err
		})
	}
	if len(dirs) < 8 {
		t.Fatalf("found %d payload directories, want the captured ones and testdata/hooks: %v", len(dirs), dirs)
	}
	recorded := 0
	defer func() {
		if recorded < 10 {
			t.Errorf("the events left %d ledger records in all: the comparison proves little", recorded)
		}
	}()
	for _, dir := range dirs {
		rel, _ := filepath.Rel("../intentgate-full/testdata", dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			agent := strings.Split(filepath.ToSlash(rel), "/")[1]
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var events []string
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".json") {
					events = append(events, e.Name())
				}
			}
			eventOrder(events)
			ws := filepath.Join(t.TempDir(), "project")
			a := replay(t, full, []string{"hook"}, agent, dir, ws, events)
			b := replay(t, lean, nil, agent, dir, ws, events)
			for i := range a.answers {
				if a.answers[i] != b.answers[i] {
					t.Errorf("answers differ\nintentgate hook:\n%s\nintentgate-hook:\n%s", a.answers[i], b.answers[i])
				}
			}
			if !slices.Equal(a.records, b.records) {
				t.Errorf("ledger records differ\nintentgate hook:\n%s\nintentgate-hook:\n%s", strings.Join(a.records, "\n"), strings.Join(b.records, "\n"))
			}
			for rel, content := range a.files {
				if b.files[rel] != content {
					t.Errorf("%s differs: intentgate hook left %q, intentgate-hook %q", rel, content, b.files[rel])
				}
			}
			for rel := range b.files {
				if _, ok := a.files[rel]; !ok {
					t.Errorf("only intentgate-hook left %s", rel)
				}
			}
			recorded += len(a.records)
			t.Logf("%d events, %d records", len(events), len(a.records))
		})
	}
}

// A read-only event takes no lock and writes nothing: after a session has
// selected its intent, the pre-events of a read leave every file and
// directory under .orchestration/ as it was (names, modes, sizes, times),
// in intentgate-hook as in intentgate hook. (A read in a workspace whose
// ledger was deleted still gets an empty ledger back: the ledger is opened
// with O_CREAT.)
func TestReadEventLeavesNothing(t *testing.T) {
	full, lean := binaries(t)
	dir := "../intentgate-full/testdata/captured"
	setup := []string{"01-SessionStart.json", "02-UserPromptSubmit.json"}
	reads := map[string][]string{
		"claude-code": {"claude-code/2.1.331/04-PreToolUse-Read.json"},
		"gemini":      {"gemini/0.61.0/03-BeforeTool-read_file.json"},
		"codex":       {"codex/0.169.0/03-PreToolUse-Bash.json"}, // cat src/a.txt
	}
	versions := map[string]string{"claude-code": "claude-code/2.1.331", "gemini": "gemini/0.61.0", "codex": "codex/0.169.0"}
	for agent, events := range reads {
		for _, bin := range []string{lean, full} {
			var args []string
			if bin == full {
				args = []string{"hook"}
			}
			ws := filepath.Join(t.TempDir(), "project")
			first := setup
			if agent == "gemini" {
				first = []string{"01-SessionStart.json", "02-BeforeAgent.json"}
			}
			replay(t, bin, args, agent, filepath.Join(dir, versions[agent]), ws, first)
			before := listing(t, filepath.Join(ws, ".orchestration"))
			if !strings.Contains(before, "sessions/") {
				t.Fatalf("%s %s: the setup events left no session:\n%s", bin, agent, before)
			}
			for _, ev := range events {
				raw, err := os.ReadFile(filepath.Join(dir, ev))
				if err != nil {
					t.Fatal(err)
				}
				raw = bytes.ReplaceAll(raw, []byte(placeholder), []byte(ws))
				cmd := exec.Command(bin, append(slices.Clone(args), agent)...)
				cmd.Env = hookEnv(ws)
				cmd.Stdin = bytes.NewReader(raw)
				out, err := cmd.CombinedOutput()
				if err != nil || bytes.Contains(out, []byte("deny")) {
					t.Fatalf("%s %s %s: %v\n%s", bin, agent, ev, err, out)
				}
			}
			if after := listing(t, filepath.Join(ws, ".orchestration")); after != before {
				t.Errorf("%s %s: a read changed .orchestration/:\nbefore:\n%s\nafter:\n%s", filepath.Base(bin), agent, before, after)
			}
		}
	}
}

// listing is every entry under dir with its size, modification time and
// inode (where the system has one).
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %d %d\n", filepath.ToSlash(rel), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
