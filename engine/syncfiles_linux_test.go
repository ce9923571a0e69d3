package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// On Linux the fsyncs go to the kernel as asynchronous requests (no
// goroutine per file): after a sync its context is back in the pool.
func TestStartSyncUsesKernelRequests(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := os.Create(filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, err := range SyncFiles(f, g) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if aioOff.Load() || len(aioFree) == 0 {
		if os.Getenv("CI") != "true" {
			t.Skip("this kernel takes no asynchronous fsync requests (io_setup refused); the goroutine fallback ran")
		}
		t.Fatal("the kernel refused asynchronous fsync requests; StartSync fell back on goroutines")
	}
}
