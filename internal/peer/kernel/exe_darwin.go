//go:build darwin

package kernel

import (
	"bytes"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// SameExecutable fails unless process pid runs this process's executable.
func SameExecutable(pid int) error {
	// kern.procargs2: argc, then the executable's path, NUL-terminated.
	args, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return err
	}
	if len(args) < 4 {
		return errors.New("no executable path for the socket's process")
	}
	path := args[4:]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pf, err := os.Stat(string(path))
	if err != nil {
		return err
	}
	sf, err := os.Stat(self)
	if err != nil {
		return err
	}
	if !os.SameFile(pf, sf) {
		return errors.New("the socket's process runs another executable")
	}
	return nil
}

// SameExecutableAs fails unless process pid runs this process's executable
// or one of the files at paths.
func SameExecutableAs(pid int, paths ...string) error {
	err := SameExecutable(pid)
	if err == nil || len(paths) == 0 {
		return err
	}
	args, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return err
	}
	if len(args) < 4 {
		return errors.New("no executable path for the socket's process")
	}
	path := args[4:]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	pf, err := os.Stat(string(path))
	if err != nil {
		return err
	}
	return sameAsOneOf(pf, paths)
}
