//go:build windows

package picture

import "io/fs"

func inode(fs.FileInfo) uint64 { return 0 }

// ctime: FileInfo carries no change time on Windows.
func ctime(fs.FileInfo) int64 { return 0 }

const openNoFollow = 0
