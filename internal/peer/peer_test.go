package peer

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOfUnixSocket(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix socket peer credentials on windows")
	}
	dir, err := os.MkdirTemp("", "peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := net.Dial("unix", l.Addr().String())
		if err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cr, err := Of(c)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil || cr.UID != os.Geteuid() || cr.PID != os.Getpid() {
		t.Errorf("Of = %+v, %v, want uid %d pid %d", cr, err, os.Geteuid(), os.Getpid())
	}
	if _, err := Of(&net.TCPConn{}); err == nil {
		t.Error("Of(a TCP connection) = nil error")
	}
}
