package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/daemon"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
)

// serveProc is one running `intentgate serve`.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	socket string
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts the daemon on ws and waits until it is listening.
func startServe(t *testing.T, ws string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), append([]string{"serve", "--workspace", ws, "--addr", "127.0.0.1:0", "-v"}, args...)...)
	p := &serveProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, out)
		p.done <- cmd.Wait()
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		t.Fatalf("serve did not start; stderr:\n%s", p.stderr.String())
	}
	var info struct{ URL, Socket string }
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		cmd.Process.Kill()
		t.Fatalf("serve printed %q (%v); stderr:\n%s", line, err, p.stderr.String())
	}
	p.url, p.socket = info.URL, info.Socket
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop ends the daemon as a service manager would, and reports how it went.
func (p *serveProc) stop(t *testing.T) error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	if runtime.GOOS == "windows" {
		p.cmd.Process.Kill()
	} else {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute): // a hang guard
		p.cmd.Process.Kill()
		t.Errorf("serve did not stop on SIGTERM; stderr:\n%s", p.stderr.String())
		return <-p.done
	}
}

// hookChannel delivers one Claude Code event and returns the answer.
type hookChannel func(raw []byte) string

// hookProcess runs `intentgate hook claude-code` with env added.
func hookProcess(t *testing.T, env ...string) hookChannel {
	return processChannel(t, func() []string { return []string{e2eBinary(t), "hook", "claude-code"} }, env...)
}

// processChannel runs the hook command argv() gives, one process per event,
// with the test's environment less what would steer it, and env added.
func processChannel(t *testing.T, argv func() []string, env ...string) hookChannel {
	return func(raw []byte) string {
		t.Helper()
		args := argv()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = t.TempDir()
		for _, kv := range os.Environ() {
			// The anchor directory (the workspace key) is kept: every
			// process of a test must share it, as every process of a user
			// does.
			if !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") &&
				(!strings.HasPrefix(kv, "INTENTGATE_") || strings.HasPrefix(kv, "INTENTGATE_ANCHOR_DIR=")) {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = bytes.NewReader(raw)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		name := filepath.Base(args[0])
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		if stderr.Len() > 0 {
			t.Logf("%s stderr: %s", name, stderr.String())
		}
		return stdout.String()
	}
}

// hookHTTP posts the event as Claude Code's http hooks do.
func hookHTTP(t *testing.T, url string) hookChannel {
	return func(raw []byte) string {
		t.Helper()
		resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s %s", url, resp.Status, body)
		}
		return string(body)
	}
}

var isoTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// execBinary is the intentgate binary named in a rewritten shell command,
// which differs between the daemon and an in-process hook.
var execBinary = regexp.MustCompile(`'[^']*' exec --session`)

// TestServeSameAnswers plays one Claude Code session three times: each event
// its own process, the hook process through the daemon's socket, and the
// daemon's HTTP endpoint. Every answer and every ledger record must match.
func TestServeSameAnswers(t *testing.T) {
	t.Parallel()
	files := map[string]string{"README.md": "line1\nalpha\nline3\n"}
	type run struct {
		name string
		e    *hookEnv
		send hookChannel
		d    *serveProc
	}
	inproc := newHookEnv(t, "claude-code", files)
	viaSocket := newHookEnv(t, "claude-code", files)
	viaHTTP := newHookEnv(t, "claude-code", files)
	ds, dh := startServe(t, viaSocket.ws), startServe(t, viaHTTP.ws)
	runs := []run{
		{"in-process", inproc, hookProcess(t, "INTENTGATE_NO_DAEMON=1"), nil},
		{"socket", viaSocket, hookProcess(t), ds},
		{"http", viaHTTP, hookHTTP(t, dh.url), dh},
	}
	if !daemon.CanVerifyPeer {
		runs = slices.Delete(runs, 1, 2) // hooks use no socket here
	}
	steps := []struct {
		event  string
		set    map[string]any
		effect func(e *hookEnv)
	}{
		{"SessionStart", nil, nil},
		{"PreToolUse-Write", nil, nil}, // no intent yet: refused
		{"UserPromptSubmit", map[string]any{"prompt": "work on @INT-001 please"}, nil},
		{"PreToolUse-Write", nil, nil},
		{"PostToolUse-Write", nil, func(e *hookEnv) { e.write("src/new.txt", "one\ntwo\n") }},
		{"PreToolUse-Read", nil, nil},
		{"PostToolUse-Read", nil, nil},
		{"PreToolUse-Edit", nil, nil},
		{"PostToolUse-Edit", nil, func(e *hookEnv) { e.write("README.md", "line1\nbeta\ngamma\nline3\n") }},
		{"PreToolUse-Bash", nil, nil},
		{"PostToolUse-Bash", nil, func(e *hookEnv) { e.write("bash.txt", "hi\n") }},
		{"Stop", nil, nil},
	}
	for i, s := range steps {
		var want string
		for _, r := range runs {
			if s.effect != nil {
				s.effect(r.e)
			}
			got := r.send(r.e.payload(s.event, s.set))
			got = isoTime.ReplaceAllString(strings.ReplaceAll(got, r.e.ws, placeholder), "TIME")
			got = execBinary.ReplaceAllString(got, "'BIN' exec --session")
			if r.name == "in-process" {
				want = got
				continue
			}
			if got != want {
				t.Errorf("step %d %s via %s:\n%s\nin-process:\n%s", i, s.event, r.name, got, want)
			}
		}
		if s.event == "PostToolUse-Bash" && !strings.Contains(want, `"decision":"block"`) {
			t.Errorf("PostToolUse-Bash answered %s, want a block", want)
		}
	}
	type rec struct {
		decision, mutation, path, session, tool string
		ranges                                  []string
	}
	ledger := func(e *hookEnv) []rec {
		var out []rec
		for _, r := range e.ledger() {
			m := r.Metadata.IG
			out = append(out, rec{m.Decision, m.Mutation, r.path(), m.Session, m.Tool, r.ranges(t, "")})
		}
		return out
	}
	want := ledger(inproc)
	if len(want) != 5 {
		t.Errorf("in-process ledger has %d records, want 5: %+v", len(want), want)
	}
	for _, r := range runs[1:] {
		if got := ledger(r.e); !slices.EqualFunc(got, want, func(a, b rec) bool {
			return a.decision == b.decision && a.mutation == b.mutation && a.path == b.path &&
				a.session == b.session && a.tool == b.tool && slices.Equal(a.ranges, b.ranges)
		}) {
			t.Errorf("ledger via %s:\n%+v\nin-process:\n%+v", r.name, got, want)
		}
		if rep, err := orchestration.VerifyChain(r.e.path(".orchestration/agent_trace.jsonl")); err != nil || !rep.OK() {
			t.Errorf("ledger via %s does not verify: %v %v", r.name, err, rep)
		}
		// The daemon answered (and not the hook process on its own).
		via := "via=" + r.name
		if n := strings.Count(r.d.stderr.String(), via); n < 8 {
			t.Errorf("the daemon logged %d events %s, want every tool event:\n%s", n, via, r.d.stderr.String())
		}
	}

	// A service manager's SIGTERM: the daemon stops cleanly and takes its
	// socket with it; hooks then do the work themselves.
	if daemon.CanVerifyPeer {
		if err := ds.stop(t); err != nil {
			t.Errorf("serve exited with %v after SIGTERM; stderr:\n%s", err, ds.stderr.String())
		}
		if _, err := os.Lstat(ds.socket); !os.IsNotExist(err) {
			t.Errorf("socket %s still there after the daemon stopped (%v)", ds.socket, err)
		}
		claudeAllowed(t, "Stop after the daemon", viaSocket.send("Stop", nil))
	}
}

// TestServeConcurrent sends many sessions' events at once to one daemon in
// this process, for the race detector and the ledger's chain.
func TestServeConcurrent(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	g, err := gate.Open(e.ws, gate.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d := daemon.New(e.ws, g, slog.New(slog.NewTextHandler(io.Discard, nil)), version)
	srv := httptest.NewServer(d.TCPHandler())
	defer srv.Close()
	post := hookHTTP(t, srv.URL+"/hooks/claude-code")

	const sessions = 8
	var wg sync.WaitGroup
	errs := make(chan string, sessions*4)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("session-%d", i)
			file := fmt.Sprintf("src/f%d.txt", i)
			set := func(extra map[string]any) map[string]any {
				m := map[string]any{"session_id": sid, "tool_use_id": fmt.Sprintf("call-%d", i)}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			if out := post(e.payload("UserPromptSubmit", set(map[string]any{"prompt": "@INT-001"}))); !strings.Contains(out, "selected intent INT-001") {
				errs <- fmt.Sprintf("%s: select answered %s", sid, out)
			}
			write := set(map[string]any{"tool_input.file_path": filepath.Join(e.ws, file), "tool_input.content": "x\n"})
			if out := post(e.payload("PreToolUse-Write", write)); out != "" {
				errs <- fmt.Sprintf("%s: pre-write answered %s", sid, out)
			}
			e.write(file, "x\n")
			post(e.payload("PostToolUse-Write", write))
			out := post(e.payload("PreToolUse-Write", set(map[string]any{"tool_input.file_path": filepath.Join(e.ws, "docs", "no.md")})))
			if !strings.Contains(out, "SCOPE_VIOLATION") {
				errs <- fmt.Sprintf("%s: out-of-scope write answered %s", sid, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	creates, denials := map[string]string{}, 0
	for _, r := range e.ledger() {
		switch m := r.Metadata.IG; m.Decision {
		case "allow":
			creates[r.path()] = m.Session
		case "deny":
			denials++
		}
	}
	for i := range sessions {
		if s := creates[fmt.Sprintf("src/f%d.txt", i)]; s != fmt.Sprintf("session-%d", i) {
			t.Errorf("src/f%d.txt recorded for session %q", i, s)
		}
	}
	if denials != sessions {
		t.Errorf("%d denials recorded, want %d", denials, sessions)
	}
	if rep, err := orchestration.VerifyChain(e.path(".orchestration/agent_trace.jsonl")); err != nil || !rep.OK() {
		t.Errorf("ledger does not verify: %v %v", err, rep)
	}
}

// TestServeSocketFallback: a socket nothing answers, or that another program
// answers, is never taken for the daemon.
func TestServeSocketFallback(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the hook never uses the socket on Windows")
	}
	e := newHookEnv(t, "claude-code", nil)
	sock := e.path(".orchestration/" + daemon.SocketName)
	ev := e.payload("PreToolUse-Write", nil)

	// A socket left behind by a daemon that is gone.
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if d := claudeDeny(t, e.run(ev)); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("with a stale socket: %+v, want NO_ACTIVE_INTENT", d)
	}
	os.Remove(sock)

	// An impostor that allows everything: this test process, which is not
	// the intentgate executable.
	l, err = net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}, 10)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		io.WriteString(w, `{"reply":{}}`)
	})}
	go srv.Serve(l)
	defer srv.Close()
	out := e.run(ev)
	if d := claudeDeny(t, out); d.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("with an impostor on the socket: %+v, want NO_ACTIVE_INTENT", d)
	}
	if len(asked) > 0 {
		t.Errorf("the hook sent the event to a process that is not intentgate")
	}
	if (runtime.GOOS == "linux" || runtime.GOOS == "darwin") && !strings.Contains(out.stderr, "not served by this intentgate executable") {
		t.Errorf("stderr %q does not warn of the impostor", out.stderr)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true}, {"[::1]:8080", true}, {"localhost:7853", true}, {"127.1.2.3:80", true},
		{"0.0.0.0:0", false}, {":7853", false}, {"192.168.1.10:80", false}, {"[::]:0", false}, {"example.com:80", false}, {"127.0.0.1", false},
	} {
		if err := daemon.CheckLoopback(tc.addr); (err == nil) != tc.ok {
			t.Errorf("daemon.CheckLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	ws := e2eWorkspace(t, mcpIntents, nil)
	out, err := runCLI(t, "", "serve", "--workspace", ws, "--addr", "0.0.0.0:0")
	if err == nil || !strings.Contains(out, "loopback") {
		t.Errorf("serve --addr 0.0.0.0:0: %v %q, want a refusal", err, out)
	}
}

func TestServeRefusesBrowsers(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, "claude-code", nil)
	g, err := gate.Open(e.ws, gate.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d := daemon.New(e.ws, g, slog.New(slog.NewTextHandler(io.Discard, nil)), version)
	h := d.TCPHandler()
	body := string(e.payload("PreToolUse-Write", nil))
	for _, tc := range []struct {
		name, method, path, host, origin string
		want                             int
	}{
		{"agent", "POST", "/hooks/claude-code", "127.0.0.1:7853", "", 200},
		{"localhost", "POST", "/hooks/claude-code", "localhost:7853", "", 200},
		{"web page", "POST", "/hooks/claude-code", "127.0.0.1:7853", "https://example.com", 403},
		{"rebinding", "POST", "/hooks/claude-code", "attacker.example:7853", "", 403},
		{"unknown agent", "POST", "/hooks/nobody", "127.0.0.1:7853", "", 404},
		{"GET", "GET", "/hooks/claude-code", "127.0.0.1:7853", "", 405},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(body))
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body.String(), tc.want)
		}
	}
}

func TestInstallDaemon(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	settings := filepath.Join(ws, ".claude", "settings.json")
	mustCLI(t, "install", "claude-code", "-w", ws)
	command, _ := os.ReadFile(settings)

	out := mustCLI(t, "install", "claude-code", "-w", ws, "--daemon")
	if !strings.Contains(out, "unchanged .claude/settings.json") || !strings.Contains(out, "never lets a call through unchecked") || !strings.Contains(out, "intentgate serve -w "+ws+" --addr 127.0.0.1:7853") {
		t.Errorf("install --daemon said %q", out)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []map[string]string
		} `json:"hooks"`
	}
	data, _ := os.ReadFile(settings)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	// Command hooks everywhere: an http hook that cannot reach the daemon
	// fails open in Claude Code; the command hook uses the daemon's socket
	// and handles the event itself when the daemon does not answer.
	cmdHook := map[string]string{"type": "command", "command": "intentgate hook claude-code"}
	for event, want := range map[string]map[string]string{
		"PreToolUse": cmdHook, "PostToolUse": cmdHook, "UserPromptSubmit": cmdHook, "SessionStart": cmdHook,
	} {
		groups := doc.Hooks[event]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 || fmt.Sprint(groups[0].Hooks[0]) != fmt.Sprint(want) {
			t.Errorf("%s: %+v, want one hook %v", event, groups, want)
		}
	}
	if out := mustCLI(t, "install", "claude-code", "-w", ws, "--daemon"); !strings.Contains(out, "unchanged .claude/settings.json") {
		t.Errorf("second install --daemon: %q", out)
	}
	// Back to command hooks, and uninstall removes either form.
	mustCLI(t, "install", "claude-code", "-w", ws)
	if data, _ := os.ReadFile(settings); string(data) != string(command) {
		t.Errorf("install without --daemon left\n%s\nwant\n%s", data, command)
	}
	mustCLI(t, "install", "claude-code", "-w", ws, "--daemon")
	mustCLI(t, "uninstall", "claude-code", "-w", ws)
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		data, _ := os.ReadFile(settings)
		t.Errorf("uninstall left %s", data)
	}

	for _, args := range [][]string{
		{"install", "codex", "-w", ws, "--daemon"},
		{"install", "claude-code", "--global", "--daemon"},
		{"install", "claude-code", "-w", ws, "--daemon=127.0.0.1:0"},
		{"install", "claude-code", "-w", ws, "--daemon=0.0.0.0:7853"},
	} {
		if out, err := runCLI(t, t.TempDir(), args...); err == nil {
			t.Errorf("%v succeeded: %q", args, out)
		}
	}
}
