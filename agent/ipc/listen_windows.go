//go:build windows

package ipc

import (
	"errors"
	"net"
	"time"
)

// errNoPipes: node-ipc clients on Windows connect to a named pipe
// (\\.\pipe\ followed by the path with slashes turned into dashes), which
// this server does not serve yet.
var errNoPipes = errors.New("the IPC server is not available on Windows yet: node-ipc clients there use named pipes, which intentgate does not serve; run it under WSL or on Linux or macOS")

// Listen refuses on Windows; see errNoPipes.
func Listen(path string) (net.Listener, error) { return nil, errNoPipes }

func dial(path string, timeout time.Duration) (net.Conn, error) { return nil, errNoPipes }
