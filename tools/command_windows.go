//go:build windows

package tools

import (
	"os/exec"
)

// killGroup: Windows has no process groups to end here (a job object would
// be the equivalent).
func killGroup(*exec.Cmd) {}
