package hooks

import (
	"fmt"
	"os"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// TestMain keeps the workspace keys and anchors the tests make (and the
// binaries they run inherit) in a directory of their own, never in the
// user's configuration directory.
func TestMain(m *testing.M) {
	if os.Getenv(orchestration.AnchorDirEnv) != "" { // a test's child process: share its parent's
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "intentgate-anchor-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(orchestration.AnchorDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
