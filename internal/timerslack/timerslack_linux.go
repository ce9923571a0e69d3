package timerslack

import (
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

func lookupEnv() (string, bool) { return os.LookupEnv(env) }
func unsetEnv()                 { os.Unsetenv(env) }

// Current is the calling thread's timer slack in nanoseconds.
func Current() (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
}

func relax() {
	// Read, set and exec on one thread: the slack is the thread's, and
	// execve keeps the calling thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || cur >= Slack {
		return
	}
	if unix.Prctl(unix.PR_SET_TIMERSLACK, Slack, 0, 0, 0) != nil {
		return
	}
	syscall.Exec(self(), os.Args, append(os.Environ(), env+"=1"))
	// Not re-executed (no /proc, say): on as before.
	unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(cur), 0, 0, 0)
}

func set() func() {
	runtime.LockOSThread()
	cur, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || cur >= Slack || unix.Prctl(unix.PR_SET_TIMERSLACK, Slack, 0, 0, 0) != nil {
		runtime.UnlockOSThread()
		return func() {}
	}
	return func() {
		unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(cur), 0, 0, 0)
		runtime.UnlockOSThread()
	}
}

// self is the path to execute this program again by: its own path while
// that is still this program's file, since the kernel names a process
// after the file it executes (ps, pgrep and top would show "exe"), else
// /proc/self/exe.
func self() string {
	const proc = "/proc/self/exe"
	p, err := os.Executable()
	if err != nil {
		return proc
	}
	fi, err := os.Stat(p)
	if err != nil {
		return proc
	}
	if pfi, err := os.Stat(proc); err != nil || !os.SameFile(fi, pfi) {
		return proc
	}
	return p
}
