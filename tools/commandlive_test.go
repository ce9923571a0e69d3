//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentgate/intentgate/engine"
)

// liveRun starts command under a CommandControl and steers it with steer
// once its output holds ready.
func liveRun(t *testing.T, opts CommandOptions, ws *engine.Workspace, command, ready string, steer func(*LiveCommand)) (*engine.Result, *LiveCommand, *statusLog) {
	t.Helper()
	log := &statusLog{}
	var lc *LiveCommand
	ctx := WithCommandStream(context.Background(), CommandStream{ExecutionID: "exec-1", Func: log.add, Interval: time.Nanosecond})
	ctx = WithCommandControl(ctx, CommandControl{Running: func(l *LiveCommand) {
		lc = l
		go func() {
			for !strings.Contains(statusOutput(log), ready) {
				time.Sleep(10 * time.Millisecond)
			}
			steer(l)
		}()
	}})
	raw, _ := json.Marshal(map[string]any{"command": command})
	c := &engine.Call{ID: "c1", Session: "s1", Tool: "execute_command", Args: raw, WS: ws}
	r, err := ExecuteCommand(opts).Run(ctx, c)
	if err != nil {
		t.Fatalf("execute_command %q: %v", command, err)
	}
	return r, lc, log
}

func statusOutput(l *statusLog) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := ""
	for _, s := range l.s {
		if s.Status == CommandOutput {
			out = s.Output
		}
	}
	return out
}

// A command the person lets keep running: its call returns at once, in
// Roo's words, with the output so far; the command goes on, and when it
// ends, what it changed since the picture before it started is judged
// (Detached) with the whole output, and the report holds the output the
// model had not read yet.
func TestExecuteCommandKeptRunning(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"a.txt": "a\n"})
	var (
		mu      sync.Mutex
		judged  []engine.FileChange
		printed string
		kept    int
	)
	opts := CommandOptions{
		KeptRunning: func(*engine.Call) { mu.Lock(); kept++; mu.Unlock() },
		Detached: func(_ context.Context, c *engine.Call, before *StoredSnapshot, output string) (*engine.Result, error) {
			ch, err := Changes(c.WS.Dir, before)
			mu.Lock()
			judged, printed = ch, output
			mu.Unlock()
			return &engine.Result{Changes: ch, Output: "JUDGED\n"}, err
		},
	}
	gate := filepath.Join(ws.Dir, "go")
	r, lc, log := liveRun(t, opts, ws, "echo first; while [ ! -e go ]; do sleep 0.05; done; echo later > b.txt; echo second", "first",
		func(l *LiveCommand) { l.Continue() })
	want := "Command is still running in terminal  from '" + filepath.ToSlash(ws.Dir) + "'.\nHere's the output so far:\nfirst\n\n\nYou will be updated on the terminal status and new output in the future."
	if r.Output != want {
		t.Errorf("result:\n%q\nwant\n%q", r.Output, want)
	}
	if len(r.Changes) != 0 || r.Data["running"] != true {
		t.Errorf("result changes %v data %v: nothing is judged before the command ends", r.Changes, r.Data)
	}
	if !lc.Detached() {
		t.Error("the command is not marked kept running")
	}
	select {
	case <-lc.Done():
		t.Fatal("the command ended before it was let go on")
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lc.Done():
	case <-time.After(time.Minute):
		t.Fatal("the kept-running command did not end")
	}
	rep := lc.Report()
	if !strings.HasPrefix(rep, "Command executed in terminal  within working directory '"+filepath.ToSlash(ws.Dir)+"'. Exit code: 0\nOutput:\nsecond\n") ||
		!strings.Contains(rep, "  created b.txt\n") || !strings.HasSuffix(rep, "JUDGED\n") {
		t.Errorf("report:\n%s", rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if kept != 1 || !strings.Contains(printed, "first\n") || !strings.Contains(printed, "second\n") {
		t.Errorf("KeptRunning told %d times; Detached given output %q", kept, printed)
	}
	paths := map[string]bool{}
	for _, ch := range judged {
		paths[ch.Path] = true
	}
	if !paths["b.txt"] || !paths["go"] {
		t.Errorf("judged changes %v, want b.txt and go (the picture is the one before the command)", judged)
	}
	var statuses []string
	for _, s := range log.s {
		statuses = append(statuses, s.Status)
	}
	if statuses[0] != CommandStarted || statuses[len(statuses)-1] != CommandExited {
		t.Errorf("statuses %v: want started ... exited", statuses)
	}
}

// Aborted in the foreground, the command and what it started are killed;
// the model reads Roo's line for a killed process.
func TestExecuteCommandAborted(t *testing.T) {
	ws := rtWorkspace(t, nil)
	r, lc, _ := liveRun(t, CommandOptions{}, ws, "echo first; (sleep 1; echo late > late.txt) & sleep 60", "first",
		func(l *LiveCommand) { l.Abort() })
	want := "Command executed in terminal  within working directory '" + filepath.ToSlash(ws.Dir) + "'. Process terminated by signal SIGKILL\nOutput:\nfirst\n"
	if r.Output != want {
		t.Errorf("result:\n%q\nwant\n%q", r.Output, want)
	}
	if lc.Continue() || lc.Abort() {
		t.Error("an ended command can still be steered")
	}
	time.Sleep(1500 * time.Millisecond) // past the background writer's second
	if _, err := os.Stat(filepath.Join(ws.Dir, "late.txt")); err == nil {
		t.Error("a process the command started outlived the abort")
	}
}

// Binary output is not streamed: fallback, then exited; the result still
// has the output.
func TestCommandStreamFallback(t *testing.T) {
	_, statuses := runCommand(t, CommandOptions{}, `printf 'text\n'; sleep 0.2; printf 'a\000b\n'; sleep 0.2; echo after`, true)
	var got []string
	for _, s := range statuses {
		if len(got) == 0 || got[len(got)-1] != s.Status {
			got = append(got, s.Status)
		}
		if s.Status == CommandOutput && strings.Contains(s.Output, "after") {
			t.Errorf("output streamed after the fallback: %q", s.Output)
		}
	}
	if strings.Join(got, " ") != "started output fallback exited" {
		t.Errorf("statuses %v, want started output fallback exited", got)
	}
}
