package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/internal/timerslack"
)

// intentgate execs intentgate-full for dispatch from a thread whose timer
// slack it raised: intentgate-full (the same process) runs with it from its
// start, without re-executing itself (no marker in its environment).
func TestServerCommandGetsTimerSlack(t *testing.T) {
	if cur, err := timerslack.Current(); err != nil {
		t.Fatalf("reading this process's timer slack: %v", err)
	} else if cur >= timerslack.Slack {
		t.Skipf("this test process already runs with a timer slack of %d ns", cur)
	}
	dir := binaries(t)
	front, full := filepath.Join(dir, "intentgate"), filepath.Join(dir, "intentgate-full")
	ws := workspace(t, full)
	cmd := exec.Command(front, "dispatch", "--workspace", ws)
	cmd.Env = append(os.Environ(), "INTENTGATE_NO_DAEMON=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	stdin.Write([]byte(`{"id":"1","session":"s","tool":"read_file","args":{"path":"README.md"}}` + "\n"))
	if ans, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(ans, `"ok":true`) {
		t.Fatalf("dispatch answered %q, %v", ans, err)
	}
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	if exe, err := os.Readlink(proc + "/exe"); err != nil || filepath.Base(exe) != "intentgate-full" {
		t.Fatalf("the process runs %q (%v), want intentgate-full", exe, err)
	}
	b, err := os.ReadFile(proc + "/timerslack_ns")
	if n, cerr := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || cerr != nil || n < timerslack.Slack {
		t.Fatalf("intentgate-full runs with a timer slack of %q ns (%v), want %d", b, err, timerslack.Slack)
	}
	if env, err := os.ReadFile(proc + "/environ"); err != nil || strings.Contains(string(env), "INTENTGATE_TIMERSLACK") {
		t.Fatalf("intentgate-full re-executed itself for the slack (its environment has the marker), or: %v", err)
	}
}
