package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecInANestedPIDNamespace runs `intentgate exec` the way Claude Code
// 2.1.331's sandbox runs every Bash command, without Claude Code: in a PID
// namespace nested under the /proc of an outer one (unshare -pf without
// remounting /proc), with Landlock alone (that sandbox refuses new user
// namespaces). Four commands in a row, so that the init's pid, read in the
// outer /proc, is some other process or none: each must run confined, and
// exec must return when the command ends, its detached descendant that
// ignores SIGTERM killed rather than waited for.
func TestExecInANestedPIDNamespace(t *testing.T) {
	t.Parallel()
	requireConfinement(t) // the nesting needs user namespaces
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test needs unshare (util-linux): %v", err)
		}
		t.Skipf("the test needs unshare (util-linux): %v", err)
	}
	ws := execWorkspace(t)
	selectIntent(t, ws, "s1", "INT-001")
	docsBefore, _ := os.ReadFile(filepath.Join(ws, "docs/readme.md"))
	intentsBefore, _ := os.ReadFile(filepath.Join(ws, ".orchestration/active_intents.yaml"))
	// The survivor's mark is put together by the shells at run time, so
	// that no command line but the survivor's holds it.
	stamp := fmt.Sprint(time.Now().UnixNano())
	mark := "exec-nested-" + stamp
	command := `echo "$1" >> src/a.go && echo WROTE-SRC
		echo x > docs/readme.md || echo REFUSED-DOCS
		echo x >> .orchestration/active_intents.yaml || echo REFUSED-INTENTS
		setsid sh -c 'trap "" TERM HUP; sleep 600; echo "$0"' "exec-nested-$IG_STAMP" </dev/null >/dev/null 2>&1 &
		echo started`
	loop := fmt.Sprintf(`for i in 1 2 3 4; do
		%s exec --session s1 -- sh -c %s sh "$i"
		echo "RUN $i STATUS $?"
		for f in /proc/[0-9]*/cmdline; do
			case "$(tr '\0' ' ' < "$f" 2>/dev/null)" in *"exec-nested-$IG_STAMP"*) echo "RUN $i LEFT A PROCESS: $f";; esac
		done
	done`, shellQuote(e2eBinary(t)), shellQuote(command))
	// Far shorter than the sleep: an exec that waits for it is stopped
	// here and fails.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "-Urpf", "--mount-proc", unshare, "-pf", "sh", "-c", loop)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "INTENTGATE_SANDBOX=landlock", "IG_STAMP="+stamp)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("exec did not return when its command ended:\n%s", out)
	}
	if err != nil {
		t.Fatalf("unshare: %v\n%s", err, out)
	}
	for i := 1; i <= 4; i++ {
		if !bytes.Contains(out, []byte(fmt.Sprintf("RUN %d STATUS 0", i))) {
			t.Errorf("run %d did not exit 0:\n%s", i, out)
		}
	}
	if bytes.Contains(out, []byte("LEFT A PROCESS")) {
		t.Errorf("a process outlived its command:\n%s", out)
	}
	for _, want := range []string{"WROTE-SRC", "REFUSED-DOCS", "REFUSED-INTENTS", "started"} {
		if n := strings.Count(string(out), want); n != 4 {
			t.Errorf("%s %d times, want 4:\n%s", want, n, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.go")); string(b) != "package a\n1\n2\n3\n4\n" {
		t.Errorf("src/a.go = %q, want the four runs' lines", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "docs/readme.md")); !bytes.Equal(b, docsBefore) {
		t.Errorf("docs/readme.md, outside the scope, was written: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".orchestration/active_intents.yaml")); !bytes.Equal(b, intentsBefore) {
		t.Errorf("active_intents.yaml was written: %q", b)
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(mark)) {
			t.Errorf("process %s outlived its command: %q", e.Name(), b)
		}
	}
}

// markedProcesses lists the pids of the processes whose command line holds
// mark.
func markedProcesses(mark string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(mark)) {
			out = append(out, pid)
		}
	}
	return out
}

// TestExecKilledEndsTheTree: when `intentgate exec` itself is killed with
// SIGKILL (an agent giving up on a command), the command's whole tree ends
// too, a detached descendant that ignores SIGTERM included, with Landlock
// alone as with namespaces.
func TestExecKilledEndsTheTree(t *testing.T) {
	t.Parallel()
	requireConfinement(t)
	ws := execWorkspace(t)
	selectIntent(t, ws, "s1", "INT-001")
	for _, mode := range []string{"landlock", "namespaces"} {
		t.Run(mode, func(t *testing.T) {
			stamp := fmt.Sprint(time.Now().UnixNano())
			mark := "exec-killed-" + stamp
			cmd := exec.Command(e2eBinary(t), "exec", "--session", "s1", "--", "sh", "-c",
				`setsid sh -c 'trap "" TERM HUP; sleep 600; echo "$0"' "exec-killed-$IG_STAMP" </dev/null >/dev/null 2>&1 &
				sleep 600`)
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "IG_STAMP="+stamp)
			if mode == "landlock" {
				cmd.Env = append(cmd.Env, "INTENTGATE_SANDBOX=landlock")
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, pid := range markedProcesses(mark) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			// A hang guard, not a measure: wait for the detached process.
			for deadline := time.Now().Add(time.Minute); len(markedProcesses(mark)) == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("the command's detached process never started")
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			left := markedProcesses(mark)
			for deadline := time.Now().Add(30 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = markedProcesses(mark) {
				time.Sleep(50 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("processes %v outlived the killed exec", left)
			}
		})
	}
}
