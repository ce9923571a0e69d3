//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/timerslack"
)

// A dispatch process runs with the coarser timer slack (it re-executed
// itself before reading anything, keeping its process id), and the commands
// it runs neither see the marker of that re-execution nor are run twice.
func TestDispatchRunsWithTimerSlack(t *testing.T) {
	if cur, err := timerslack.Current(); err != nil {
		t.Fatalf("reading this process's timer slack: %v", err)
	} else if cur >= timerslack.Slack {
		t.Skipf("this test process already runs with a timer slack of %d ns", cur)
	}
	e := newAtkEnv(t, atkOpts{})
	p := e.start()
	p.selectIntent("INT-ALL")
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/timerslack_ns")
	if err != nil {
		t.Fatalf("the timer slack of the dispatch process: %v", err)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n < timerslack.Slack {
		t.Fatalf("the dispatch process runs with a timer slack of %q ns, want %d", b, timerslack.Slack)
	}
	res := p.send("execute_command", map[string]any{"command": "echo marker=[$INTENTGATE_TIMERSLACK]"})
	if !res.OK || !strings.Contains(res.Output, "marker=[]") {
		t.Fatalf("execute_command: %+v, want its output to show no marker", res)
	}
	p.close()
}

// A server started directly re-executes itself for the timer slack; it
// keeps its name, so that ps, pgrep and top show intentgate-full, not the
// name of the link it was re-executed through.
func TestTimerSlackKeepsProcessName(t *testing.T) {
	if cur, err := timerslack.Current(); err != nil {
		t.Fatalf("reading this process's timer slack: %v", err)
	} else if cur >= timerslack.Slack {
		t.Skipf("this test process already runs with a timer slack of %d ns", cur)
	}
	full := filepath.Join(filepath.Dir(atkBin), "intentgate-full")
	cmd := exec.Command(full, "mcp", "--workspace", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	pid := strconv.Itoa(cmd.Process.Pid)
	// The re-execution is done once the slack is set and the marker gone
	// from the process's environment as the kernel shows it (the one the
	// re-execution was given).
	var comm []byte
	for i := 0; ; i++ {
		slack, _ := os.ReadFile("/proc/" + pid + "/timerslack_ns")
		env, _ := os.ReadFile("/proc/" + pid + "/environ")
		comm, _ = os.ReadFile("/proc/" + pid + "/comm")
		if n, err := strconv.Atoi(strings.TrimSpace(string(slack))); err == nil && n >= timerslack.Slack && strings.Contains(string(env), "INTENTGATE_TIMERSLACK=1") {
			break
		}
		if i == 500 {
			t.Fatalf("intentgate-full mcp did not re-execute itself with the timer slack (slack %q)", slack)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.TrimSpace(string(comm)); got != "intentgate-full" {
		t.Fatalf("intentgate-full mcp is named %q after its re-execution, want intentgate-full", got)
	}
}

// intentgate-full dispatch started directly (not through intentgate)
// re-executes itself with the marker, and the commands it runs for the
// agent do not see the marker.
func TestDirectDispatchHidesTimerSlackMarker(t *testing.T) {
	if cur, err := timerslack.Current(); err != nil {
		t.Fatalf("reading this process's timer slack: %v", err)
	} else if cur >= timerslack.Slack {
		t.Skipf("this test process already runs with a timer slack of %d ns", cur)
	}
	// Not parallel: the parallel tests, which read atkBin, run after it.
	launcher := atkBin
	atkBin = filepath.Join(filepath.Dir(launcher), "intentgate-full")
	defer func() { atkBin = launcher }()
	e := newAtkEnv(t, atkOpts{})
	p := e.start()
	p.selectIntent("INT-ALL")
	pid := strconv.Itoa(p.cmd.Process.Pid)
	env, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "INTENTGATE_TIMERSLACK=1") {
		t.Fatalf("intentgate-full dispatch started directly did not re-execute itself with the marker")
	}
	res := p.send("execute_command", map[string]any{"command": "echo marker=[$INTENTGATE_TIMERSLACK]"})
	if !res.OK || !strings.Contains(res.Output, "marker=[]") {
		t.Fatalf("execute_command: %+v, want its output to show no marker", res)
	}
	p.close()
}
