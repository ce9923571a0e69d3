//go:build windows

package engine

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// slotsRemovedAtClose is false here: a file open in another process cannot
// be removed, so a slot done with stays for the next process to take over.
const slotsRemovedAtClose = false

func openSlotAt(d *dirRef, name string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	return d.root.OpenFile(name, flags, 0o644)
}

// slotLockHigh places a slot's lock far past its bytes: Windows locks are
// mandatory for the range they cover, and readers must still read the slot.
const slotLockHigh = 0x40000000

func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{OffsetHigh: slotLockHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func unlockSlot(f *os.File) {
	ol := &windows.Overlapped{OffsetHigh: slotLockHigh}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

func slotAt(d *dirRef, name string, id fs.FileInfo) bool {
	fi, err := d.root.Lstat(name)
	return err == nil && fi.Mode().IsRegular() && os.SameFile(fi, id)
}

func removeSlotAt(d *dirRef, name string) error { return d.root.Remove(name) }
