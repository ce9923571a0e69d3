//go:build !linux

package bench

import "time"

// procCPU reads a process's CPU time on Linux only.
func procCPU(pid int) (time.Duration, bool) { return 0, false }
