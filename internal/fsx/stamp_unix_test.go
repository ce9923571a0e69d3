//go:build unix

package fsx

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO planted where a File reads must fail the read, not hang it
// waiting for a writer.
func TestFileRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := NewFile(fifo, 0).Read(); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Read of a FIFO succeeded, want an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read of a FIFO with no writer hangs")
	}
}
