//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// killGroup ends whatever is left of the command's process group once the
// shell has exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
