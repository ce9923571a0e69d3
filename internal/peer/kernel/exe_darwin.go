//go:build darwin

package kernel

import (
	"bytes"
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// procExe is the executable process pid runs.
func procExe(pid int) (fs.FileInfo, error) {
	// kern.procargs2: argc, then the executable's path, NUL-terminated.
	args, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	if len(args) < 4 {
		return nil, errors.New("no executable path for the socket's process")
	}
	path := args[4:]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	return os.Stat(string(path))
}

// selfExe is this process's executable.
func selfExe() (fs.FileInfo, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return os.Stat(self)
}
