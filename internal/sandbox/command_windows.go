//go:build windows

package sandbox

import "os/exec"

func unconfined(*exec.Cmd) {}

func shellArgv(command string) []string { return []string{"cmd.exe", "/C", command} }
