//go:build linux || darwin

package kernel

import (
	"errors"
	"os"
)

var errOtherExecutable = errors.New("the socket's process runs another executable")

// SameExecutable fails unless process pid runs this process's executable.
func SameExecutable(pid int) error { return SameExecutableAs(pid) }

// SameExecutableAs fails unless process pid runs this process's executable
// or one of the files at paths.
func SameExecutableAs(pid int, paths ...string) error {
	pf, err := procExe(pid)
	if err != nil {
		return err
	}
	sf, err := selfExe()
	if err != nil {
		return err
	}
	if os.SameFile(pf, sf) {
		return nil
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && os.SameFile(pf, fi) {
			return nil
		}
	}
	return errOtherExecutable
}
