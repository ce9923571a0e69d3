//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/intentgate/intentgate/agent"
)

// liveProc is `intentgate run --output-format stream-json` driven as a
// program drives it: its stream is read as it comes and answers are
// written when the asks show.
type liveProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	done   chan error
	stderr bytes.Buffer

	mu    sync.Mutex
	lines []string
}

func startLive(t *testing.T, ws, url string, args ...string) *liveProc {
	t.Helper()
	all := append([]string{"run", "-w", ws, "--output-format", "stream-json", "--retry-delay", "1ms"}, args...)
	cmd := exec.Command(e2eBinary(t), all...)
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	p := &liveProc{cmd: cmd, done: make(chan error, 1)}
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 16<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.done <- cmd.Wait()
	}()
	return p
}

// waitFor waits for a stream line holding every one of subs; the time
// limit only ends a hung run.
func (p *liveProc) waitFor(t *testing.T, subs ...string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, l := range p.lines {
			all := true
			for _, s := range subs {
				all = all && strings.Contains(l, s)
			}
			if all {
				p.mu.Unlock()
				return l
			}
		}
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("no stream line with %q; the stream:\n%s\nstderr:\n%s", subs, strings.Join(p.lines, "\n"), p.stderr.String())
	return ""
}

func (p *liveProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// finish closes stdin (a completion is then accepted) and waits for the
// exit; it returns the stream's ClineMessages and statuses apart.
func (p *liveProc) finish(t *testing.T) ([]agent.Message, []map[string]any) {
	t.Helper()
	p.in.Close()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("run: %v\nstderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("run did not end")
	}
	var msgs []agent.Message
	var statuses []map[string]any
	for _, l := range p.lines {
		var m agent.Message
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stream line %q: %v", l, err)
		}
		if m.Type == "commandExecutionStatus" {
			var st map[string]any
			if err := json.Unmarshal([]byte(m.Text), &st); err != nil {
				t.Fatalf("status %q: %v", m.Text, err)
			}
			statuses = append(statuses, st)
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, statuses
}

const keptIntents = `active_intents:
  - id: INT-001
    name: scripts
    status: IN_PROGRESS
    owned_scope: ["app/**/*.js"]
`

// ledgerMetas is the intentgate metadata of each ledger record, with its
// path.
func ledgerMetas(t *testing.T, ws string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
			Metadata map[string]map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("ledger line %q: %v", l, err)
		}
		m := rec.Metadata["dev.intentgate"]
		if len(rec.Files) > 0 {
			m["path"] = rec.Files[0].Path
		}
		out = append(out, m)
	}
	return out
}

// TestRunKeptRunningCommandIsJudgedWhenItEnds: the person lets a command
// keep running (a terminalOperation line on stdin, when the command_output
// ask shows) and the agent goes on writing files with its own tools. After
// the agent moved on, the command, as an attacker would, writes a file of
// the intent's directory outside its scope, a file the agent also wrote,
// a file outside the workspace's writable part and one under
// .orchestration/. When it exits it is judged by the same judgement as
// every command: the out-of-scope file is a violation, restored
// (on_violation: revert); the writes the sandbox refused are recorded; the
// file both wrote is recorded as ambiguous; the file only the agent's tool
// wrote is not credited to the command. The model is told, in the next
// request's environment details, once.
func TestRunKeptRunningCommandIsJudgedWhenItEnds(t *testing.T) {
	ws := e2eWorkspace(t, keptIntents, map[string]string{".orchestration/config.yaml": "on_violation: revert\n"})
	const command = "echo started; while [ ! -e app/go.js ]; do sleep 0.1; done; echo late > app/late.txt; echo cmd > app/both.js; " +
		"echo out > outside.txt; echo gov > .orchestration/evil.txt; echo finished"
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, call("t2", "execute_command", map[string]any{"command": command})),
		turn("", small, write("t3", "app/both.js", "agent\n")),
		turn("", small, write("t4", "app/go.js", "go\n")),
		turn("", small, call("t5", "ask_followup_question", map[string]any{"question": "Has it finished?", "follow_up": []map[string]any{{"text": "yes"}}})),
		complete("t6", "done"))
	p := startLive(t, ws, url, "--auto-approve", "read,edit,command", "run the script")
	p.waitFor(t, `"ask":"command_output"`)
	p.send(t, `{"type":"terminalOperation","terminalOperation":"continue"}`)
	p.waitFor(t, `"ask":"followup"`)
	p.waitFor(t, `commandExecutionStatus`, `\"status\":\"exited\"`)
	p.send(t, reply("messageResponse", "yes"))
	msgs, statuses := p.finish(t)

	// The statuses: started with the pid and the command, exited 0.
	if len(statuses) < 2 || statuses[0]["status"] != "started" || statuses[0]["command"] != command || statuses[0]["pid"] == nil {
		t.Fatalf("statuses %v: want started with pid and command first", statuses)
	}
	last := statuses[len(statuses)-1]
	if last["status"] != "exited" || last["exitCode"] != float64(0) || last["executionId"] != statuses[0]["executionId"] {
		t.Errorf("last status %v, want exited 0 of execution %v", last, statuses[0]["executionId"])
	}
	conformance(t, msgs, nil)
	statusConformance(t, statuses)

	// What the model read: the command still running, then, once, how it
	// ended and its judgement.
	reqs := fake.Requests()
	if got := resultText(lastUser(t, reqs[2])[0]); !strings.HasPrefix(got, "Command is still running in terminal  from '") ||
		!strings.Contains(got, "Here's the output so far:\nstarted\n") || !strings.Contains(got, "You will be updated on the terminal status and new output in the future.") {
		t.Errorf("the model was told %q when the command was let go on", got)
	}
	told := 0
	var report string
	for _, rq := range reqs {
		for _, b := range lastUser(t, rq) {
			if txt, _ := b["text"].(string); strings.Contains(txt, "# Inactive Terminals with Completed Process Output") {
				told++
				report = txt
			}
		}
	}
	if told != 1 {
		t.Fatalf("the end of the command was told in %d requests, want 1", told)
	}
	for _, want := range []string{"Exit code: 0", "finished", "SCOPE_VIOLATION", "app/late.txt", "(restored)", "ambiguous", "app/both.js"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}

	// The workspace and the ledger.
	for _, gone := range []string{"app/late.txt", "outside.txt", ".orchestration/evil.txt"} {
		if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(gone))); err == nil {
			t.Errorf("%s exists after the command was judged", gone)
		}
	}
	byCommand := map[string]map[string]any{}
	var refused []string
	for _, m := range ledgerMetas(t, ws) {
		if m["command"] != command {
			continue
		}
		path, _ := m["path"].(string)
		if m["decision"] == "deny" {
			refused = append(refused, string(mustJSONAny(m["denial"])))
			continue
		}
		byCommand[path] = m
	}
	if m := byCommand["app/late.txt"]; m == nil || m["decision"] != "violation" {
		t.Errorf("app/late.txt's record = %v, want a violation of the command", m)
	}
	if m := byCommand["app/both.js"]; m == nil || m["ambiguous"] == nil || m["ambiguous"] == "" {
		t.Errorf("app/both.js's record = %v, want it ambiguous", m)
	}
	if m := byCommand["app/go.js"]; m != nil {
		t.Errorf("app/go.js, written by the agent's tool, was credited to the command: %v", m)
	}
	all := strings.Join(refused, "\n")
	if !strings.Contains(all, "outside.txt") || !strings.Contains(all, "evil.txt") {
		t.Errorf("the refused writes are not all recorded: %s", all)
	}

	// The call is counted once in the session's tool usage, though its
	// command was judged twice over (when it returned, and when it ended).
	var sum struct {
		TaskID string `json:"taskId"`
	}
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.HasPrefix(l, "{") {
			json.Unmarshal([]byte(l), &sum)
		}
	}
	out, _ := runIG(t, "session", "show", sum.TaskID, "-w", ws, "--json")
	var sj struct {
		ToolUsage struct {
			Tools []struct {
				Tool     string `json:"tool"`
				Attempts int    `json:"attempts"`
			} `json:"tools"`
		} `json:"tool_usage"`
	}
	if err := json.Unmarshal([]byte(out), &sj); err != nil {
		t.Fatalf("session show --json: %v\n%s", err, out)
	}
	for _, st := range sj.ToolUsage.Tools {
		if st.Tool == "execute_command" && st.Attempts != 1 {
			t.Errorf("execute_command counted %d times in the session, want 1", st.Attempts)
		}
	}
}

func mustJSONAny(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestRunCommandAbortedOnAPipe: a terminalOperation abort kills the command
// and what it started; the model reads Roo's line for a killed process.
func TestRunCommandAbortedOnAPipe(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	const command = "echo started; (sleep 3; echo late > app/late.txt) & sleep 60"
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, call("t2", "execute_command", map[string]any{"command": command})),
		complete("t3", "done"))
	p := startLive(t, ws, url, "--auto-approve", "read,command", "run it")
	p.waitFor(t, `"ask":"command_output"`)
	p.send(t, `{"type":"terminalOperation","terminalOperation":"abort"}`)
	p.waitFor(t, `"ask":"completion_result"`)
	time.Sleep(3500 * time.Millisecond) // past the background writer's time
	msgs, _ := p.finish(t)
	conformance(t, msgs, nil)
	got := resultText(lastUser(t, fake.Requests()[2])[0])
	if !strings.Contains(got, "Process terminated by signal SIGKILL\nOutput:\nstarted\n") {
		t.Errorf("after the abort the model got %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "app", "late.txt")); err == nil {
		t.Error("a process the command started outlived the abort")
	}
}

// TestRunCommandOutputAskOnATerminal drives the command_output ask through
// a pseudo-terminal: y lets the first command keep running (it is killed,
// and judged, when the task ends), n aborts the second.
func TestRunCommandOutputAskOnATerminal(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, nil)
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, call("t2", "execute_command", map[string]any{"command": "echo one; sleep 60"})),
		turn("", small, call("t3", "execute_command", map[string]any{"command": "echo two; sleep 60"})),
		complete("t4", "done"))
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--auto-approve", "read,command", "run two commands")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer tty.Close()
	out := &ptyOutput{}
	go io.Copy(out, tty)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	const keys = "[y] let it keep running while the model goes on   [n] abort it"
	screen := out.waitFor(t, keys, 1)
	if !strings.Contains(screen, "$ echo one; sleep 60 (running, pid ") || !strings.Contains(screen, "The command is still running.") {
		t.Fatalf("the first command's prompt:\n%s", screen)
	}
	io.WriteString(tty, "y\n")
	out.waitFor(t, keys, 2)
	io.WriteString(tty, "n\n")
	out.waitFor(t, "[y] accept", 1)
	io.WriteString(tty, "y\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("run did not end:\n%s", out.String())
	}
	reqs := fake.Requests()
	if got := resultText(lastUser(t, reqs[2])[0]); !strings.HasPrefix(got, "Command is still running in terminal") {
		t.Errorf("after y the model got %q", got)
	}
	u := lastUser(t, reqs[3])
	if got := resultText(u[0]); !strings.Contains(got, "Process terminated by signal SIGKILL\nOutput:\ntwo\n") {
		t.Errorf("after n the model got %q", got)
	}
	env, _ := u[len(u)-1]["text"].(string)
	if !strings.Contains(env, "# Actively Running Terminals\n## Command `echo one; sleep 60`") {
		t.Errorf("the environment details do not show the command still running:\n%s", env)
	}
}

// statusConformance checks a command's statuses with
// commandExecutionStatusSchema of @roo-code/types 1.63.0.
func statusConformance(t *testing.T, statuses []map[string]any) {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "agent", "testdata", "conformance"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@roo-code", "types"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the conformance check needs node and `npm ci` in %s: %v", dir, err)
		}
		t.Skipf("conformance check skipped (run npm ci in agent/testdata/conformance): %v", err)
	}
	b, _ := json.Marshal(map[string]any{"commandStatuses": statuses})
	f := filepath.Join(t.TempDir(), "statuses.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, filepath.Join(dir, "check.mjs"), f).CombinedOutput(); err != nil {
		t.Errorf("the command statuses do not conform to @roo-code/types 1.63.0: %v\n%s", err, out)
	}
}
