//go:build linux || android || dragonfly || openbsd || solaris || illumos

package picture

import "syscall"

func statCtime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
