//go:build !linux && !darwin

package kernel

import (
	"errors"
	"runtime"
)

// SameExecutable cannot tell here which executable a process runs.
func SameExecutable(int) error {
	return errors.New("the process behind a socket cannot be checked on " + runtime.GOOS)
}

// SameExecutableAs cannot tell here which executable a process runs.
func SameExecutableAs(pid int, _ ...string) error { return SameExecutable(pid) }
