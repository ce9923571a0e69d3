//go:build unix

package fsx

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// NoFollow makes an open fail on a symlink in the last component: the files
// intentgate keeps for itself must never be redirected by a link an agent's
// command put in their place.
const NoFollow = syscall.O_NOFOLLOW

// NonBlock keeps an open of a FIFO from waiting for a writer that may never
// come; check the opened file is regular before reading it.
const NonBlock = syscall.O_NONBLOCK

func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlockFile(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

func rename(from, to string) error { return os.Rename(from, to) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
