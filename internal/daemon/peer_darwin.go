//go:build darwin

package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

const isWindows = false

// CanVerifyPeer: the kernel says who listens on a socket.
const CanVerifyPeer = true

// verifyPeer checks, through the kernel's record of who listens on the
// socket, that it is this user running this executable.
func verifyPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var pid int
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		if pid, cerr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); cerr == nil {
			cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		}
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("the socket's process runs as uid %d", cred.Uid)
	}
	// kern.procargs2: argc, then the executable's path, NUL-terminated.
	args, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return err
	}
	if len(args) < 4 {
		return errors.New("no executable path for the socket's process")
	}
	path := args[4:]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pf, err := os.Stat(string(path))
	if err != nil {
		return err
	}
	sf, err := os.Stat(self)
	if err != nil {
		return err
	}
	if !os.SameFile(pf, sf) {
		return errors.New("the socket's process runs another executable")
	}
	return nil
}

// tcpPeerUID cannot tell here who owns the other end of a TCP connection.
func tcpPeerUID(client, server *net.TCPAddr) (int, bool) { return 0, false }

// canTellTCPPeer: nothing here tells who owns a TCP client.
const canTellTCPPeer = false

func tcpPeer(client, server *net.TCPAddr) (int, uint64, bool) { return 0, 0, false }
