package peer

import (
	"net"
	"os"
	"runtime"
	"testing"
)

// TestTCPPeerUID finds this process's own end of a loopback connection in
// the kernel's socket table, over IPv4 and IPv6.
func TestTCPPeerUID(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux tells who owns the other end of a TCP connection")
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		uid, _, ok := TCP(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
		if !ok || uid != os.Geteuid() {
			t.Errorf("%s: TCP = %d, %v; want %d, true", addr, uid, ok, os.Geteuid())
		}
		// A port nothing uses: no such connection.
		free, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		bogus := *s.RemoteAddr().(*net.TCPAddr)
		bogus.Port = free.Addr().(*net.TCPAddr).Port
		free.Close()
		if uid, _, ok := TCP(&bogus, s.LocalAddr().(*net.TCPAddr)); ok {
			t.Errorf("%s: TCP of no connection = %d, true; want false", addr, uid)
		}
		c.Close()
		s.Close()
		l.Close()
	}
}
