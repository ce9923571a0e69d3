//go:build darwin

package peer

import (
	"net"

	"golang.org/x/sys/unix"
)

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = true

func of(uc *net.UnixConn) (Cred, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return Cred{}, err
	}
	var pid int
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		if pid, cerr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); cerr == nil {
			cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		}
	}); err != nil {
		return Cred{}, err
	}
	if cerr != nil {
		return Cred{}, cerr
	}
	return Cred{UID: int(cred.Uid), PID: pid}, nil
}
