package engine

import (
	"io/fs"
	"os"
	"syscall"
)

// sameVersion reports whether a and b, two Lstats of one name, show the same
// file with the same content: the same inode, size, modification and change
// times. An atomic replace gives a new inode and a write in place a new
// change time, so the file read under the lock need not be read again.
// Where change times are coarse (a clock tick), a write of the same size in
// the same tick as the one before goes unseen: the late look at a file
// narrows the window for writers that do not take the lock, it never
// closes it.
func sameVersion(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && os.SameFile(a, b) && a.Size() == b.Size() &&
		a.ModTime().Equal(b.ModTime()) && sa.Ctim == sb.Ctim
}
