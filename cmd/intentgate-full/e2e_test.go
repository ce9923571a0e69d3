package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	e2eOnce sync.Once
	e2eBin  string
	e2eErr  error
)

// prebuilt is the binary TestMain built, where it builds one.
var prebuilt string

// e2eBinary builds the intentgate binary once for the package's tests.
func e2eBinary(t *testing.T) string {
	t.Helper()
	if prebuilt != "" {
		return prebuilt // TestMain built it
	}
	e2eOnce.Do(func() {
		dir, err := os.MkdirTemp("", "intentgate-bin-")
		if err != nil {
			e2eErr = err
			return
		}
		e2eBin, e2eErr = buildInstall(dir)
	})
	if e2eErr != nil {
		t.Fatal(e2eErr)
	}
	return e2eBin
}

// buildInstall builds intentgate and intentgate-full into dir, as
// `go install ./cmd/...` puts them, and returns intentgate's path: the tests
// run the commands as a user does, through intentgate, which answers hook
// events itself and runs intentgate-full for the other commands.
func buildInstall(dir string) (string, error) {
	for name, pkg := range map[string]string{"intentgate": "../intentgate", "intentgate-full": "."} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build -o %s %s: %v\n%s", name, pkg, err, out)
		}
	}
	return filepath.Join(dir, "intentgate"), nil
}

// e2eWorkspace makes a git repository with the given intents and files.
func e2eWorkspace(t *testing.T, intents string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	all := map[string]string{".orchestration/active_intents.yaml": intents}
	for k, v := range files {
		all[k] = v
	}
	for name, body := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const e2eIntents = `active_intents:
  - id: INT-001
    name: auth
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-009
    name: later
    status: PENDING
    owned_scope: ["docs/**"]
`

// session is one running `intentgate dispatch` process.
type session struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	id   string
	next int
}

func startDispatch(t *testing.T, ws, id string) *session {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), "dispatch", "--workspace", ws)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), id: id}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return s
}

// close ends the dispatch process (its input closed) and waits for it: a
// process that serves calls writes the derived state it batches (usage
// counters, read hashes, the intent map) at least every 200 ms and when it
// ends, so what another command shows of a live session may lag that much.
func (s *session) close() {
	s.t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Fatalf("dispatch: %v", err)
	}
}

type result struct {
	ID     string `json:"id"`
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Error  string `json:"error"`
	Denial *struct {
		Code     string `json:"error"`
		Path     string `json:"path"`
		Expected string `json:"expected_sha256"`
		Actual   string `json:"actual_sha256"`
		Param    string `json:"parameter"`
	} `json:"denial"`
}

func (r result) code() string {
	if r.Denial == nil {
		return ""
	}
	return r.Denial.Code
}

// send writes one call without waiting for its answer.
func (s *session) send(tool string, args map[string]any) {
	s.t.Helper()
	s.next++
	b, _ := json.Marshal(map[string]any{"id": fmt.Sprint(s.next), "session": s.id, "tool": tool, "args": args})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) recv() result {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("reading a result: %v", err)
	}
	var r result
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("result %q: %v", line, err)
	}
	return r
}

func (s *session) call(tool string, args map[string]any) result {
	s.t.Helper()
	s.send(tool, args)
	return s.recv()
}

// Two sessions read the same file and both write it: exactly one wins, the
// other gets STALE_FILE, and the file holds the winner's content.
func TestTwoSessionsOneWins(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/shared.go": "package src\n"})
	a, b := startDispatch(t, ws, "a"), startDispatch(t, ws, "b")
	for _, s := range []*session{a, b} {
		if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}); !r.OK {
			t.Fatalf("select: %+v", r)
		}
	}
	for round := 0; round < 8; round++ {
		for _, s := range []*session{a, b} {
			if r := s.call("read_file", map[string]any{"path": "src/shared.go"}); !r.OK {
				t.Fatalf("read: %+v", r)
			}
		}
		contentA := fmt.Sprintf("package src // by a, round %d\n", round)
		contentB := fmt.Sprintf("package src // by b, round %d\n", round)
		a.send("write_to_file", map[string]any{"path": "src/shared.go", "content": contentA})
		b.send("write_to_file", map[string]any{"path": "src/shared.go", "content": contentB})
		ra, rb := a.recv(), b.recv()
		got, err := os.ReadFile(filepath.Join(ws, "src", "shared.go"))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ra.OK && !rb.OK:
			if rb.code() != "STALE_FILE" || string(got) != contentA {
				t.Fatalf("round %d: b got %+v (denial %+v), file %q", round, rb, rb.Denial, got)
			}
		case rb.OK && !ra.OK:
			if ra.code() != "STALE_FILE" || string(got) != contentB {
				t.Fatalf("round %d: a got %+v (denial %+v), file %q", round, ra, ra.Denial, got)
			}
		default:
			t.Fatalf("round %d: want exactly one success, got a=%+v b=%+v", round, ra, rb)
		}
	}
}

func TestDispatchProtocolErrors(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/a.go": "package a\n"})
	cmd := exec.Command(e2eBinary(t), "dispatch", "-w", ws)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`not json`,
		`{"id":"2","session":"s","tool":"read_file","args":{"path":"src/a.go"},"extra":1}`,
		`{"id":"3","session":"s","tool":"read_file","args":{}}`,
		``,
		`{"id":"5","session":"s","tool":"select_active_intent","args":{"intent_id":"INT-009"}}`,
		`{"id":"6","session":"s","tool":"select_active_intent","args":{"intent_id":"INT-404"}}`,
		`{"id":"7","session":"s","tool":"select_active_intent","args":{"intent_id":"INT-001"}}`,
		`{"id":"8","session":"s","tool":"frobnicate","args":{}}`,
		`{"id":"9","session":"s","tool":"write_to_file","args":{"path":"src/b.go"}}`,
		`{"id":"10","session":"s","tool":"write_to_file","args":"nope"}`,
		`{"id":"11","session":"s","tool":"read_file","args":{"path":"src/a.go","start_line":2,"end_line":1}}`,
		`{"id":"12","session":"s","tool":"read_file","args":{"path":"src/a.go"}}`,
	}, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	var got []result
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result %q: %v", l, err)
		}
		got = append(got, r)
	}
	want := []struct {
		ok    bool
		code  string
		error string
	}{
		{error: "line 1: not a call"},
		{error: `unknown field "extra"`},
		{code: "MISSING_PARAMETER"},
		{code: "INTENT_NOT_ACTIVE"},
		{code: "UNKNOWN_INTENT"},
		{ok: true},
		{code: "INVALID_ARGUMENT"},
		{code: "MISSING_PARAMETER"},
		{code: "INVALID_ARGUMENT"},
		{code: "INVALID_ARGUMENT"},
		{ok: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		if g.OK != w.ok || g.code() != w.code || !strings.Contains(g.Error, w.error) {
			t.Errorf("result %d = %+v (denial %+v), want ok=%v code=%q error~%q", i+1, g, g.Denial, w.ok, w.code, w.error)
		}
	}
	if !strings.Contains(got[len(got)-1].Output, "1 | package a") {
		t.Errorf("read_file output = %q, want line-numbered content", got[len(got)-1].Output)
	}
}

func TestInitNeverOverwrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine := "active_intents: []\n# mine\n"
	if err := os.MkdirAll(filepath.Join(dir, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".orchestration", "active_intents.yaml"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		out, err := exec.Command(e2eBinary(t), "init", "-w", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".orchestration", "active_intents.yaml")); string(b) != mine {
		t.Errorf("init changed an existing active_intents.yaml: %q", b)
	}
	gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if !strings.HasPrefix(string(gi), "node_modules/\n") || strings.Count(string(gi), ".orchestration/sessions/") != 1 {
		t.Errorf(".gitignore = %q, want the user's line kept and ours added once", gi)
	}
	if _, err := os.Stat(filepath.Join(dir, ".intentignore")); err != nil {
		t.Errorf("init did not create .intentignore: %v", err)
	}
	// The scaffolded example must itself load.
	dir2 := t.TempDir()
	if out, err := exec.Command(e2eBinary(t), "init", "-w", dir2).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	out, err := exec.Command(e2eBinary(t), "intents", "list", "-w", dir2).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "INT-001") {
		t.Errorf("intents list on the scaffold: %v\n%s", err, out)
	}
}

func TestIntentsCheckExitCodes(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	for _, tc := range []struct {
		path string
		code int
		says string
	}{
		{"src/x.go", 0, "INT-001: yes, through src/**"},
		{"docs/a.md", 1, "is PENDING, not IN_PROGRESS"},
		{"lib/a.go", 1, "no, outside owned_scope"},
		{".orchestration/agent_trace.jsonl", 1, "governance file"},
		{"../x", 1, "PATH_ESCAPE"},
	} {
		out, err := exec.Command(e2eBinary(t), "intents", "check", "-w", ws, tc.path).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.says) {
			t.Errorf("intents check %s: exit %d, output %q; want exit %d and %q", tc.path, code, out, tc.code, tc.says)
		}
	}
}

func TestDemoRuns(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(e2eBinary(t), "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"DENIED NO_ACTIVE_INTENT", "DENIED SCOPE_VIOLATION", "DENIED PROTECTED_PATH",
		"DENIED NOT_READ", "DENIED STALE_FILE", "src/billing/NOTES.txt: Permission denied",
		"| src/auth/token.go |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}
