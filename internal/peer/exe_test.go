package peer

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// SameExecutable accepts this process and refuses a process that runs
// another program.
func TestSameExecutable(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no way to tell a process's executable here")
	}
	if err := SameExecutable(os.Getpid()); err != nil {
		t.Fatalf("SameExecutable(self) = %v, want nil", err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := SameExecutable(cmd.Process.Pid); err == nil {
		t.Fatal("SameExecutable(sleep) = nil, want an error")
	}
	if err := SameExecutable(1 << 30); err == nil {
		t.Fatal("SameExecutable(no such process) = nil, want an error")
	}
}
