//go:build linux || darwin

package fsx

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func stampOf(st *unix.Stat_t) Stamp {
	return Stamp{
		dev:   uint64(st.Dev),
		ino:   uint64(st.Ino),
		mode:  uint32(st.Mode),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		known: true,
	}
}

func stampPath(path string, follow bool) (Stamp, error) {
	var st unix.Stat_t
	var err error
	for {
		if follow {
			err = unix.Stat(path, &st)
		} else {
			err = unix.Lstat(path, &st)
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return Stamp{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return stampOf(&st), nil
}

// readStamped reads the regular file at path whole with plain system calls
// (open, fstat, read, close): the os package would register the descriptor
// with the runtime's poller first, three fcntl and an epoll_ctl that fails
// for a regular file. It returns the stamp of what it read, taken before
// the read, and how settled the file must be for that stamp to prove it
// unchanged later (Seen.Note).
func readStamped(path string, flags int) ([]byte, Stamp, time.Duration, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|flags, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, Stamp{}, 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, Stamp{}, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, Stamp{}, 0, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	settle := settleOf(fd, &st)
	// One byte more than the stamped size, to see the end in one read.
	buf := make([]byte, 0, max(st.Size+1, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, Stamp{}, 0, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return buf, stampOf(&st), settle, nil
		}
		buf = buf[:len(buf)+n]
	}
}

var errNotRegular = errors.New("not a regular file")

// StampFd returns the stamp of the open file fd, and how settled it must
// be to prove it unchanged later (Seen.Note).
func StampFd(fd int) (Stamp, time.Duration, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Stamp{}, 0, err
	}
	return stampOf(&st), settleOf(fd, &st), nil
}
