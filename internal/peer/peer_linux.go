//go:build linux

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
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Cred{}, err
	}
	if cerr != nil {
		return Cred{}, cerr
	}
	return Cred{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}
