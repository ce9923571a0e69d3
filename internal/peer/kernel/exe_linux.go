//go:build linux

package kernel

import (
	"errors"
	"fmt"
	"os"
)

// SameExecutable fails unless process pid runs this process's executable.
func SameExecutable(pid int) error {
	pf, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return err
	}
	sf, err := os.Stat("/proc/self/exe")
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
	if SameExecutable(pid) == nil {
		return nil
	}
	pf, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return err
	}
	return sameAsOneOf(pf, paths)
}
