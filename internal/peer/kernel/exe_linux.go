//go:build linux

package kernel

import (
	"io/fs"
	"os"
	"strconv"
)

// procExe is the executable process pid runs.
func procExe(pid int) (fs.FileInfo, error) {
	return os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
}

// selfExe is this process's executable.
func selfExe() (fs.FileInfo, error) { return os.Stat("/proc/self/exe") }
