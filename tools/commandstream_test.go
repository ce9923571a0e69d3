//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentgate/intentgate/engine"
)

type statusLog struct {
	mu sync.Mutex
	s  []CommandExecutionStatus
}

func (l *statusLog) add(s CommandExecutionStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s = append(l.s, s)
}

func runCommand(t *testing.T, opts CommandOptions, command string, stream bool) (string, []CommandExecutionStatus) {
	t.Helper()
	ws := rtWorkspace(t, map[string]string{"a.txt": "a\n"})
	log := &statusLog{}
	ctx := context.Background()
	if stream {
		ctx = WithCommandStream(ctx, CommandStream{ExecutionID: "exec-1", Func: log.add, Interval: time.Nanosecond})
	}
	raw, _ := json.Marshal(map[string]any{"command": command})
	c := &engine.Call{ID: "c1", Session: "s1", Tool: "execute_command", Args: raw, WS: ws}
	r, err := ExecuteCommand(opts).Run(ctx, c)
	if err != nil {
		t.Fatalf("execute_command %q: %v", command, err)
	}
	return strings.ReplaceAll(r.Output, ws.Dir, "WS"), log.s
}

func TestExecuteCommandResultText(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"echo hello", "Command executed in terminal  within working directory 'WS'. Exit code: 0\nOutput:\nhello\n"},
		{"echo oops; exit 3", "Command executed in terminal  within working directory 'WS'. Command execution was not successful, inspect the cause and adjust as needed.\nExit code: 3\nOutput:\noops\n"},
		{"true", "Command executed in terminal  within working directory 'WS'. Exit code: 0\nOutput:\n"},
		{`printf '0%%\r50%%\r100%%\n'; printf 'ab\bc\n'; for i in 1 2 3 4 5 6; do echo same line again; done`,
			"Command executed in terminal  within working directory 'WS'. Exit code: 0\nOutput:\n100%\nac\nsame line again\n<previous line repeated 5 additional times>\n"},
		// Confined, the shell is the child of the sandbox's init, which
		// tells the signal that killed it: Roo's line, not exit 137.
		{"kill -9 $$", "Command executed in terminal  within working directory 'WS'. Process terminated by signal SIGKILL\nOutput:\n"},
		{"echo before; kill -TERM $$", "Command executed in terminal  within working directory 'WS'. Process terminated by signal SIGTERM\nOutput:\nbefore\n"},
		// The init's status pipe is its own: the shell cannot write a
		// forged signal there.
		{"test -e /proc/$$/fd/3 && echo leaked || echo closed", "Command executed in terminal  within working directory 'WS'. Exit code: 0\nOutput:\nclosed\n"},
		// A real exit 137 is an exit code, not a signal.
		{"exit 137", "Command executed in terminal  within working directory 'WS'. Command execution was not successful, inspect the cause and adjust as needed.\nExit code: 137\nOutput:\n"},
	} {
		got, _ := runCommand(t, CommandOptions{}, tc.command, false)
		if got != tc.want {
			t.Errorf("execute_command %q:\n%q\nwant\n%q", tc.command, got, tc.want)
		}
	}
	got, _ := runCommand(t, CommandOptions{Timeout: 300 * time.Millisecond}, "sleep 5", false)
	if want := "The command was terminated after exceeding a user-configured 0.3s timeout. Do not try to re-run the command.\n"; got != want {
		t.Errorf("timeout: %q, want %q", got, want)
	}
}

func TestExecuteCommandLineLimit(t *testing.T) {
	got, _ := runCommand(t, CommandOptions{LineLimit: 10}, "seq 1 100", false)
	// The final newline ends an empty 101st line, which Roo counts too.
	want := "Output:\n1\n2\n\n[...91 lines omitted...]\n\n94\n95\n96\n97\n98\n99\n100\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("seq 1 100 with 10 lines:\n%q\nwant suffix\n%q", got, want)
	}
	// A flood of output stays bounded.
	got, _ = runCommand(t, CommandOptions{}, "head -c 5000000 /dev/zero | tr '\\0' 'x'; echo; seq 1 1000", false)
	if len(got) > 60_000 || !strings.Contains(got, "characters omitted") || !strings.HasSuffix(got, "1000\n") {
		t.Errorf("a 5 MB output gave %d bytes, ending %q", len(got), got[max(0, len(got)-80):])
	}
}

func TestExecuteCommandStreams(t *testing.T) {
	_, log := runCommand(t, CommandOptions{}, "echo one; sleep 0.2; echo two; exit 4", true)
	if len(log) < 3 {
		t.Fatalf("statuses = %+v", log)
	}
	first, last := log[0], log[len(log)-1]
	if first.Status != CommandStarted || first.PID <= 0 || first.Command != "echo one; sleep 0.2; echo two; exit 4" || first.ExecutionID != "exec-1" {
		t.Errorf("first status = %+v, want started with pid and command", first)
	}
	if last.Status != CommandExited || last.ExitCode == nil || *last.ExitCode != 4 {
		t.Errorf("last status = %+v, want exited 4", last)
	}
	outputs := 0
	for _, s := range log[1 : len(log)-1] {
		if s.Status != CommandOutput {
			t.Errorf("between started and exited: %+v", s)
		}
		outputs++
	}
	if outputs < 2 || log[len(log)-2].Output != "one\ntwo\n" {
		t.Errorf("output statuses = %+v, want output as it came and all of it last", log[1:len(log)-1])
	}
	// Roo's JSON shape, field by field.
	for _, tc := range []struct {
		s    CommandExecutionStatus
		want string
	}{
		{first, `{"command":"echo one; sleep 0.2; echo two; exit 4","executionId":"exec-1","pid":` + strconv.Itoa(first.PID) + `,"status":"started"}`},
		{CommandExecutionStatus{ExecutionID: "e", Status: CommandOutput, Output: ""}, `{"executionId":"e","output":"","status":"output"}`},
		{last, `{"executionId":"exec-1","exitCode":4,"status":"exited"}`},
		{CommandExecutionStatus{ExecutionID: "e", Status: CommandExited}, `{"executionId":"e","status":"exited"}`},
		{CommandExecutionStatus{ExecutionID: "e", Status: CommandTimeout}, `{"executionId":"e","status":"timeout"}`},
	} {
		b, err := json.Marshal(tc.s)
		if err != nil || string(b) != tc.want {
			t.Errorf("json = %s (%v), want %s", b, err, tc.want)
		}
	}

	_, log = runCommand(t, CommandOptions{Timeout: 200 * time.Millisecond}, "sleep 5", true)
	if log[len(log)-1].Status != CommandTimeout {
		t.Errorf("timed out command: last status %+v, want timeout", log[len(log)-1])
	}
}
