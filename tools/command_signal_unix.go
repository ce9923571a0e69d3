//go:build unix

package tools

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitSignal returns how a process that did not exit was killed.
func exitSignal(ps *os.ProcessState) (*signalError, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return nil, false
	}
	return &signalError{name: unix.SignalName(ws.Signal()), core: ws.CoreDump()}, true
}

func signalName(s syscall.Signal) string { return unix.SignalName(s) }
