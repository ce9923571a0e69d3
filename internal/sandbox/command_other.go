//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

func probe() (Mechanism, string) {
	return None, fmt.Sprintf("intentgate has no sandbox for %s (Landlock on Linux and Seatbelt on macOS are what it uses)", runtime.GOOS)
}

func confined(context.Context, Mechanism, *Policy, string, string, []string) (*exec.Cmd, error) {
	return nil, ErrUnavailable
}

func initMain(string) int {
	fmt.Fprintln(os.Stderr, "intentgate sandbox: no sandbox on", runtime.GOOS)
	return 125
}
