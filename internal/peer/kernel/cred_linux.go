//go:build linux

package kernel

import "golang.org/x/sys/unix"

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = true

// FD returns the credentials the kernel recorded for the process at the
// other end of the connected Unix socket fd.
func FD(fd uintptr) (Cred, error) {
	cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Cred{}, err
	}
	return Cred{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}
