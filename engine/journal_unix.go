//go:build unix

package engine

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// slotsRemovedAtClose: a slot done with is removed at Close, still locked.
const slotsRemovedAtClose = true

// openSlotAt opens the slot name in d for reading and writing, not
// following a symlink; create makes it, and fails if it exists.
func openSlotAt(d *dirRef, name string, create bool) (*os.File, error) {
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if create {
		flags |= unix.O_CREAT | unix.O_EXCL
	}
	for {
		fd, err := unix.Openat(int(d.f.Fd()), name, flags, 0o644)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// tryLock takes f's lock (flock, exclusive or shared) if nobody holds it in
// a way that conflicts, without waiting: false means it is held.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		}
		return false, err
	}
}

func unlockSlot(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// slotAt reports whether name in d is still the regular file id: one
// fstatat.
func slotAt(d *dirRef, name string, id fs.FileInfo) bool {
	var st unix.Stat_t
	if unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	was, ok := id.Sys().(*syscall.Stat_t)
	return ok && uint64(was.Dev) == uint64(st.Dev) && uint64(was.Ino) == uint64(st.Ino)
}

func removeSlotAt(d *dirRef, name string) error { return unix.Unlinkat(int(d.f.Fd()), name, 0) }
