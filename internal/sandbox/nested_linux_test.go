//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The stages of TestLandlockOnlyUnderAnOuterProc, in the environment of the
// test binary it runs again.
const (
	nestedStage = "INTENTGATE_TEST_NESTED_STAGE"
	nestedWS    = "INTENTGATE_TEST_NESTED_WS"
)

// TestLandlockOnlyUnderAnOuterProc builds what Claude Code 2.1.331's sandbox
// gives a command, without Claude Code: a nested PID namespace under the
// /proc of an outer one (getpid and /proc disagree), and no user namespace
// for the init (Landlock alone). The test binary runs itself as the outer
// namespace's first process, which mounts that namespace's /proc, and that
// runs it again in a nested PID namespace, where commands are confined a few
// times in a row (each init gets a new pid, and the same number in the outer
// /proc is another process, a thread, or nothing). Each command must run
// confined, and return when it ends, its detached, SIGTERM-ignoring
// descendants killed, not waited for.
func TestLandlockOnlyUnderAnOuterProc(t *testing.T) {
	switch os.Getenv(nestedStage) {
	case "outer":
		nestedOuter(t)
		return
	case "inner":
		nestedInner(t)
		return
	}
	requireMechanism(t, Namespaces) // the nesting needs user namespaces
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLandlockOnlyUnderAnOuterProc$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), nestedStage+"=outer", nestedWS+"="+f.ws)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the nested run hung:\n%s", out)
	}
	if err != nil || !bytes.Contains(out, []byte("NESTED-RUNS-DONE")) {
		t.Fatalf("the nested run failed (%v):\n%s", err, out)
	}
	t.Logf("%s", out)
}

// nestedOuter is the outer PID namespace's first process: it mounts the
// namespace's /proc and runs the inner stage in a nested PID namespace,
// which keeps this /proc.
func nestedOuter(t *testing.T) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLandlockOnlyUnderAnOuterProc$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), nestedStage+"=inner")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the inner stage: %v", err)
	}
}

func nestedInner(t *testing.T) {
	self, err := os.Readlink("/proc/self")
	if err != nil {
		t.Fatal(err)
	}
	if self == strconv.Itoa(os.Getpid()) {
		t.Fatalf("/proc is this PID namespace's own (/proc/self is %s, getpid %d): the test would not test the nesting", self, os.Getpid())
	}
	t.Logf("getpid %d, /proc/self %s", os.Getpid(), self)
	old := forceMech
	forceMech = LandlockOnly
	defer func() { forceMech = old }()
	f := fixture{ws: os.Getenv(nestedWS)}
	p, err := ForScope(f.ws, []string{"src/**"}, Config{WritableOutside: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		token := fmt.Sprintf("nested-%d-%d", time.Now().UnixNano(), i)
		script := fmt.Sprintf(`
			echo %[1]d >> src/main.go && echo WROTE-SRC
			echo out > docs/n%[1]d.txt || echo REFUSED-DOCS
			echo x >> .orchestration/active_intents.yaml || echo REFUSED-INTENTS
			setsid sh -c 'trap "" TERM HUP; sleep 60 # %[2]s' </dev/null >/dev/null 2>&1 &
			( sh -c 'sleep 60 # %[2]s' </dev/null >/dev/null 2>&1 & ) &
			echo started`, i, token)
		// Far shorter than the sleeps: a run that waits for them is
		// stopped here and fails.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd, cleanup, err := Shell(ctx, p, f.ws, script)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		stopped := ctx.Err() != nil
		cancel()
		cleanup()
		var ee *exec.ExitError
		switch {
		case stopped:
			t.Fatalf("run %d did not return when the command ended; output:\n%s", i, out.String())
		case errors.As(err, &ee):
			t.Fatalf("run %d: exit %d; output:\n%s", i, ee.ExitCode(), out.String())
		case err != nil:
			t.Fatalf("run %d: %v", i, err)
		}
		for _, want := range []string{"WROTE-SRC", "REFUSED-DOCS", "REFUSED-INTENTS", "started"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %d: no %s in the output:\n%s", i, want, out.String())
			}
		}
		if _, err := os.Stat(filepath.Join(f.ws, "docs", fmt.Sprintf("n%d.txt", i))); err == nil {
			t.Errorf("run %d wrote docs/, outside the scope", i)
		}
		if s := survivors(token); len(s) > 0 {
			t.Errorf("run %d: processes outlived the command:\n%s", i, strings.Join(s, "\n"))
		}
	}
	if !t.Failed() {
		fmt.Println("NESTED-RUNS-DONE")
	}
}
