//go:build windows

package tools

import "os"

// exitSignal: Windows processes end with an exit code, never a signal.
func exitSignal(*os.ProcessState) (*signalError, bool) { return nil, false }
