//go:build windows

package tools

import (
	"os"
	"strconv"
	"syscall"
)

// exitSignal: Windows processes end with an exit code, never a signal.
func exitSignal(*os.ProcessState) (*signalError, bool) { return nil, false }

func signalName(s syscall.Signal) string { return "signal " + strconv.Itoa(int(s)) }
