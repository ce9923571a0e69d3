package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing f's data to the disk without waiting: the
// fsyncs that follow then find their blocks allocated in the journal
// transaction that is still open, so that one commit covers every file
// started this way (syncTogether).
func startWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// datasync is fdatasync(2): f's data, and of its metadata only what reading
// the data back needs (its size, its blocks), not its times. A journal slot
// rewritten in place needs no more.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
