package fsx

import (
	"os"
	"syscall"
)

func stampInfo(fi os.FileInfo) Stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{}
	}
	return Stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), size: st.Size,
		mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano(), known: true}
}
