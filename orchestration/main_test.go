package orchestration

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the workspace keys the tests make in a directory of their
// own, never in the user's configuration directory.
func TestMain(m *testing.M) {
	if os.Getenv(AnchorDirEnv) != "" { // a test's child process: share its parent's
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "intentgate-anchor-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(AnchorDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
