//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/intentgate/intentgate/internal/timerslack"
)

const isWindows = false

// execFull replaces this process with intentgate-full: the same process,
// arguments (the program name as given), environment and open files, so
// signals, exit status and the process id are intentgate-full's own. It
// returns only when the exec fails.
func execFull(full string, args []string) error {
	argv := append([]string{os.Args[0]}, args...)
	// A server command inherits the coarser timer slack from the thread
	// that execs it, so intentgate-full need not re-execute for it.
	restore := timerslack.Set(args)
	err := syscall.Exec(full, argv, os.Environ())
	restore()
	return err
}
