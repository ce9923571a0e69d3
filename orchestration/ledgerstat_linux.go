package orchestration

import (
	"os"
	"syscall"
)

// ledgerStatKey is what tells one state of a file from another: identity,
// size, and the modification and change times in nanoseconds.
func ledgerStatKey(fi os.FileInfo) (k ledgerKey, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return k, false
	}
	return ledgerKey{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
