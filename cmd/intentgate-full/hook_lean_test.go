package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/internal/daemon"
	"github.com/intentgate/intentgate/orchestration"
)

var (
	leanOnce sync.Once
	leanDir  string
	leanErr  error
)

type buildError struct {
	what string
	err  error
	out  []byte
}

func (e *buildError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }

// leanBinary builds intentgate-hook into a directory of its own, beside
// hard links to the intentgate and intentgate-full the tests run (the same file, so a daemon of
// that intentgate is the one beside it), as `go install ./cmd/...` puts
// them. Not beside the shared test binary: the install tests would find it.
func leanBinary(t *testing.T) string {
	t.Helper()
	full := e2eBinary(t)
	leanOnce.Do(func() {
		if leanDir, leanErr = os.MkdirTemp("", "intentgate-lean-"); leanErr != nil {
			return
		}
		for _, name := range []string{"intentgate", "intentgate-full"} {
			if leanErr = os.Link(filepath.Join(filepath.Dir(full), name), filepath.Join(leanDir, name)); leanErr != nil {
				return
			}
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(leanDir, "intentgate-hook"), "../intentgate-hook").CombinedOutput(); err != nil {
			leanErr = &buildError{what: "go build ../intentgate-hook", err: err, out: out}
		}
	})
	if leanErr != nil {
		t.Fatal(leanErr)
	}
	return filepath.Join(leanDir, "intentgate-hook")
}

// leanProcess runs `intentgate-hook claude-code` with env added.
func leanProcess(t *testing.T, env ...string) hookChannel {
	return processChannel(t, func() []string { return []string{leanBinary(t), "claude-code"} }, env...)
}

// intentgate-hook hands events to a running `intentgate serve` through its
// socket (the daemon runs the intentgate beside it, which it trusts), and
// the answers are those of intentgate-hook on its own and of
// `intentgate hook`.
func TestLeanHookThroughDaemon(t *testing.T) {
	if !daemon.CanVerifyPeer {
		t.Skip("hooks use no socket on this system")
	}
	files := map[string]string{"README.md": "line1\nalpha\nline3\n"}
	full := newHookEnv(t, "claude-code", files)
	alone := newHookEnv(t, "claude-code", files)
	viaSocket := newHookEnv(t, "claude-code", files)
	d := startServe(t, viaSocket.ws)
	runs := []struct {
		name string
		e    *hookEnv
		send hookChannel
	}{
		{"intentgate hook", full, hookProcess(t, "INTENTGATE_NO_DAEMON=1")},
		{"intentgate-hook", alone, leanProcess(t, "INTENTGATE_NO_DAEMON=1")},
		{"intentgate-hook via the daemon", viaSocket, leanProcess(t)},
	}
	steps := []struct {
		event  string
		set    map[string]any
		effect func(e *hookEnv)
	}{
		{"SessionStart", nil, nil},
		{"UserPromptSubmit", map[string]any{"prompt": "work on @INT-001 please"}, nil},
		{"PreToolUse-Write", nil, nil},
		{"PostToolUse-Write", nil, func(e *hookEnv) { e.write("src/new.txt", "one\ntwo\n") }},
		{"PreToolUse-Read", nil, nil},
		{"PostToolUse-Read", nil, nil},
		{"PreToolUse-Edit", nil, nil},
		{"PostToolUse-Edit", nil, func(e *hookEnv) { e.write("README.md", "line1\nbeta\ngamma\nline3\n") }},
		{"PreToolUse-Bash", nil, nil},
		{"PostToolUse-Bash", nil, func(e *hookEnv) { e.write("bash.txt", "hi\n") }},
	}
	for i, s := range steps {
		var want string
		for j, r := range runs {
			if s.effect != nil {
				s.effect(r.e)
			}
			got := r.send(r.e.payload(s.event, s.set))
			if j == 1 && s.event == "PreToolUse-Bash" && !strings.Contains(got, filepath.Join(filepath.Dir(leanBinary(t)), "intentgate")+"' exec") {
				t.Errorf("%s answered %s, want the command run by the intentgate beside intentgate-hook", r.name, got)
			}
			got = isoTime.ReplaceAllString(strings.ReplaceAll(got, r.e.ws, placeholder), "TIME")
			got = execBinary.ReplaceAllString(got, "'BIN' exec --session")
			if j == 0 {
				want = got
				continue
			}
			if got != want {
				t.Errorf("step %d %s, %s:\n%s\nintentgate hook:\n%s", i, s.event, r.name, got, want)
			}
		}
	}
	for _, r := range runs {
		if rep, err := orchestration.VerifyChain(r.e.path(".orchestration/agent_trace.jsonl")); err != nil || !rep.OK() {
			t.Errorf("ledger of %s does not verify: %v %v", r.name, err, rep)
		}
		// The intent selection, the write, the edit and the command.
		if n := len(r.e.ledger()); n != 4 {
			t.Errorf("ledger of %s has %d records, want 4", r.name, n)
		}
	}
	if n := strings.Count(d.stderr.String(), "via=socket"); n < 8 {
		t.Errorf("the daemon logged %d events via=socket, want every tool event:\n%s", n, d.stderr.String())
	}
}
