//go:build linux || darwin

package hookclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/intentgate/intentgate/internal/peer/kernel"
)

// dialUnix connects a stream socket to the Unix socket at path, waiting at
// most timeout (or until ctx's deadline, if sooner) for the connection, and
// returns it with the credentials the kernel recorded for the process that
// listens there. It does what net.Dialer's DialContext("unix") does, with
// the same errors for a missing socket (ENOENT), a socket no one listens on
// (ECONNREFUSED) and a listener whose queue is full (EAGAIN).
func dialUnix(ctx context.Context, path string, timeout time.Duration) (*os.File, kernel.Cred, error) {
	if err := ctx.Err(); err != nil {
		return nil, kernel.Cred{}, err
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	// The descriptor is made close-on-exec under ForkLock, so that no
	// command this process starts meanwhile inherits it.
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, kernel.Cred{}, os.NewSyscallError("socket", err)
	}
	cr, err := connectUnix(fd, path, deadline)
	if err != nil {
		unix.Close(fd)
		return nil, kernel.Cred{}, fmt.Errorf("dial unix %s: %w", path, err)
	}
	// A descriptor in non-blocking mode becomes a pollable *os.File, whose
	// reads and writes honour SetDeadline.
	return os.NewFile(uintptr(fd), path), cr, nil
}

func connectUnix(fd int, path string, deadline time.Time) (kernel.Cred, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return kernel.Cred{}, os.NewSyscallError("setnonblock", err)
	}
	err := unix.Connect(fd, &unix.SockaddrUnix{Name: path})
	for errors.Is(err, unix.EINTR) {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
	}
	switch {
	case err == nil, errors.Is(err, unix.EISCONN):
	case errors.Is(err, unix.EINPROGRESS), errors.Is(err, unix.EALREADY):
		if err := waitConnected(fd, deadline); err != nil {
			return kernel.Cred{}, err
		}
	default:
		return kernel.Cred{}, os.NewSyscallError("connect", err)
	}
	cr, err := kernel.FD(uintptr(fd))
	if err != nil {
		return kernel.Cred{}, os.NewSyscallError("getsockopt", err)
	}
	return cr, nil
}

// waitConnected waits for a connection in progress on fd to be made or
// refused, until deadline.
func waitConnected(fd int, deadline time.Time) error {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		ms := int(left / time.Millisecond)
		if ms == 0 {
			ms = 1
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		if n == 0 {
			continue // the deadline is checked above
		}
		soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return os.NewSyscallError("getsockopt", err)
		}
		if soerr != 0 {
			return os.NewSyscallError("connect", syscall.Errno(soerr))
		}
		return nil
	}
}
