//go:build !ipcagent

package main

import (
	"errors"
	"log/slog"

	"github.com/intentgate/intentgate/internal/gate"
)

// serveIPC needs intentgate's agent to run the tasks; see serve_ipc.go.
func serveIPC(path string, rt *gate.Runtime, log *slog.Logger) (stop func(), err error) {
	return nil, errors.New("--ipc: this build has no agent to run IPC tasks (build with -tags ipcagent)")
}
