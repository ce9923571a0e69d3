//go:build unix

package tools

import (
	"io/fs"
	"os/exec"
	"syscall"
)

// killGroup ends whatever is left of the command's process group once the
// shell has exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

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
