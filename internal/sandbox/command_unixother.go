//go:build unix && !linux && !darwin

package sandbox

import (
	"os/exec"
	"syscall"
)

func unconfined(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

func shellArgv(command string) []string { return []string{"/bin/sh", "-c", command} }
