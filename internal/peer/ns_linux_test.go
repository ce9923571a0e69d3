//go:build linux

package peer

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckNamespace: this process passes; a process in a PID namespace of
// its own (as every confined command runs), one this namespace cannot see
// (pid 0) and one that is gone do not.
func TestCheckNamespace(t *testing.T) {
	if err := CheckNamespace(os.Getpid()); err != nil {
		t.Errorf("this process: %v", err)
	}
	for _, pid := range []int{0, 1 << 30} {
		if err := CheckNamespace(pid); !errors.Is(err, ErrConfined) {
			t.Errorf("pid %d: %v, want ErrConfined", pid, err)
		}
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot start a process in a new PID namespace: %v", err)
		}
		t.Skipf("cannot start a process in a new PID namespace: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := CheckNamespace(cmd.Process.Pid); !errors.Is(err, ErrConfined) {
		t.Errorf("a process in its own PID namespace: %v, want ErrConfined", err)
	}
	// And through a socket: Of refuses it.
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Of(s); err != nil {
		t.Errorf("Of a connection of this process: %v", err)
	}
}
