//go:build unix

package snap

import (
	"io/fs"
	"os"
	"syscall"
)

// openedLinks is the number of names of the opened file f, whose fstat gave
// fi.
func openedLinks(_ *os.File, fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
