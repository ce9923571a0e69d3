// Package timerslack coarsens the kernel's timer slack for intentgate's
// long-running servers (dispatch, mcp, serve).
//
// The Go runtime's monitor thread (sysmon) sleeps 20 microseconds at a time
// for a millisecond after every burst of system calls that follows a pause,
// then backs off. A server answers one call at a time and pauses between
// them, so each call wakes it some 50 to 100 times. With 8 sessions on 2
// cores those wake-ups were about 15% of the servers' CPU (perf, this
// project's 8-session benchmark). A thread's timer slack lets the kernel
// fire its timers up to that much late and group them; with 1 ms, the same
// benchmark used about 30% less CPU per governed write. Timers of
// intentgate itself run in milliseconds or more (batches of 200 ms), so
// firing up to 1 ms late changes nothing it does.
//
// A thread's slack is inherited by the threads it creates and kept across
// execve, and the runtime starts sysmon before any code of the program
// runs; so sysmon gets it only from the thread that executed the program.
// intentgate sets it on the thread that executes intentgate-full for a
// server command (Set); intentgate-full, started for one some other way,
// re-executes itself once with it (Relax), before the server reads
// anything. Elsewhere nothing changes.
package timerslack

// Slack is the timer slack, in nanoseconds, a server runs with.
const Slack = 1_000_000

// env marks the re-executed process, so that it never re-executes again
// (removed at once: commands the server starts do not see it).
const env = "INTENTGATE_TIMERSLACK"

// servers are the commands that run for a whole session.
var servers = map[string]bool{"dispatch": true, "mcp": true, "serve": true}

// Relax is called first thing by main with the command line's arguments
// (without the program name). For a server command whose timer slack is
// below Slack it re-executes the binary with Slack and does not return; in
// every other case, and if re-executing fails, it returns and the process
// goes on as it is.
func Relax(args []string) {
	if _, again := lookupEnv(); again {
		unsetEnv()
		return
	}
	if len(args) == 0 || !servers[args[0]] {
		return
	}
	relax()
}

// Set is for a process about to execute a program with args: for a server
// command it locks the calling goroutine to its thread and raises the
// thread's timer slack to Slack, which the program inherits. The returned
// function, for when the exec failed, puts both back.
func Set(args []string) (restore func()) {
	if len(args) == 0 || !servers[args[0]] {
		return func() {}
	}
	return set()
}
