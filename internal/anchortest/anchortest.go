// Package anchortest keeps the workspace keys and ledger anchors that tests
// make in a directory of their own, never in the user's configuration
// directory.
package anchortest

import (
	"fmt"
	"os"
	"testing"
)

// Main runs m with env (orchestration.AnchorDirEnv, passed in so that the
// orchestration package's own tests can use this too) naming a fresh
// directory that the tests and the binaries they run share, and removes it
// afterwards. A test's child process already has env set and keeps its
// parent's. It returns the exit code for os.Exit.
func Main(m *testing.M, env string) int {
	if os.Getenv(env) != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "intentgate-anchor-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv(env, dir)
	return m.Run()
}
