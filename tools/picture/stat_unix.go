//go:build unix

package picture

import (
	"io/fs"
	"syscall"
)

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// ctime is the inode change time in nanoseconds.
func ctime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return statCtime(st)
	}
	return 0
}

// openNoFollow makes an open refuse a symlink and not block on a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
