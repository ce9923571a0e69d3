//go:build unix

package snap

import (
	"os"

	"golang.org/x/sys/unix"
)

// createWrite creates p, which must not exist yet (nor be a symlink), and
// writes b to it, with plain system calls: an os.File would add the
// poller's checks (four fcntl calls and a refused epoll registration) to
// every snapshot.
func createWrite(p string, b []byte) error {
	var fd int
	var err error
	for {
		fd, err = unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	for len(b) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, b)
		if err == unix.EINTR {
			err = nil
			continue
		}
		if err == nil && n == 0 {
			err = unix.EIO
		}
		b = b[n:]
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil && cerr != unix.EINTR {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return &os.PathError{Op: "write", Path: p, Err: err}
	}
	return nil
}
