//go:build windows

package tools

import (
	"io/fs"
	"os/exec"
)

// killGroup: Windows has no process groups to end here (a job object would
// be the equivalent).
func killGroup(*exec.Cmd) {}

func inode(fs.FileInfo) uint64 { return 0 }

// ctime: FileInfo carries no change time on Windows.
func ctime(fs.FileInfo) int64 { return 0 }

const openNoFollow = 0
