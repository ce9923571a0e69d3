//go:build unix

package orchestration

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO planted where intentgate reads a decision file (the intents, the
// modes, a session) must fail the read, never hang the process waiting
// for a writer.
func TestDecisionFilesRefuseAFIFO(t *testing.T) {
	orch := filepath.Join(t.TempDir(), DirName)
	if err := os.MkdirAll(filepath.Join(orch, SessionsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	sessions := OpenSessions(filepath.Join(orch, SessionsDir))
	for _, p := range []string{filepath.Join(orch, IntentsName), filepath.Join(orch, "modes.yaml"), sessions.path("s")} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checks := map[string]func() error{
		"intents": func() error { _, err := OpenIntentStore(filepath.Join(orch, IntentsName)); return err },
		"modes":   func() error { _, err := OpenModes(filepath.Join(orch, "modes.yaml")).Current(); return err },
		"session": func() error { _, err := sessions.Load("s"); return err },
	}
	for name, check := range checks {
		done := make(chan error, 1)
		go func() { done <- check() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: a FIFO in place of the file was accepted", name)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: reading a FIFO hangs", name)
		}
	}
}
