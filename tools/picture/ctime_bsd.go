//go:build darwin || freebsd || netbsd

package picture

import "syscall"

func statCtime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
