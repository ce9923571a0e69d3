//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

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
