//go:build darwin

package kernel

import "golang.org/x/sys/unix"

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = true

// FD returns the credentials the kernel recorded for the process at the
// other end of the connected Unix socket fd.
func FD(fd uintptr) (Cred, error) {
	pid, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return Cred{}, err
	}
	cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Cred{}, err
	}
	return Cred{UID: int(cred.Uid), PID: pid}, nil
}
