package peer

import (
	"os"
	"os/exec"
	"path/filepath"
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

// SameExecutableAs accepts a process that runs one of the named files and
// refuses one that runs a copy of it elsewhere or any other program: the
// hook trusts a daemon by the file it runs, never by its name.
func TestSameExecutableAs(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no way to tell a process's executable here")
	}
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(sleepPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "sleep")
	if err := os.WriteFile(copyPath, body, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sleepPath, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if err := SameExecutableAs(pid, copyPath); err == nil {
		t.Fatal("SameExecutableAs(sleep, a copy of sleep) = nil, want an error")
	}
	if err := SameExecutableAs(pid); err == nil {
		t.Fatal("SameExecutableAs(sleep) with no paths = nil, want an error")
	}
	if err := SameExecutableAs(pid, filepath.Join(dir, "missing"), sleepPath); err != nil {
		t.Fatalf("SameExecutableAs(sleep, %s) = %v, want nil", sleepPath, err)
	}
	if err := SameExecutableAs(os.Getpid(), copyPath); err != nil {
		t.Fatalf("SameExecutableAs(self) = %v, want nil", err)
	}
}
