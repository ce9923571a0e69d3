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
