//go:build unix && !(darwin || freebsd || netbsd || linux || android || dragonfly || openbsd || solaris || illumos)

package picture

import "syscall"

// statCtime: no change time on this platform; size, mtime and inode remain.
func statCtime(*syscall.Stat_t) int64 { return 0 }
