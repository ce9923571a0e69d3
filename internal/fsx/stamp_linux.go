package fsx

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// localFS are the file systems whose timestamps come from this kernel's
// clock with nanosecond fields: a ctime there lags the real time by at most
// one tick of the coarse clock. On others (network file systems stamp with
// the server's clock, FUSE with whatever its daemon says, FAT and others
// with coarse resolutions) a stamp proves nothing and the file is read
// every time.
var localFS = map[uint32]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // f2fs
	0x794C7630: true, // overlayfs (the upper or lower layer's own times)
	0x2FC12FC1: true, // zfs
	0xCA451A4E: true, // bcachefs
}

// coarseTick is the resolution of the kernel clock that stamps files.
var coarseTick = sync.OnceValue(func() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_REALTIME_COARSE, &ts); err != nil || ts.Nano() <= 0 {
		return 10 * time.Millisecond // HZ=100, the coarsest common tick
	}
	return time.Duration(ts.Nano())
})

// settleOf says how long before a read the file's ctime must lie for its
// stamp to prove it unchanged later (Seen.Note). Two ticks of the coarse
// clock, and a margin, on a local file system stamping in nanoseconds; two
// seconds where the timestamps hold whole seconds only (ext4 with small
// inodes: a ctime whose nanoseconds are all zero is taken as that); never
// elsewhere.
func settleOf(fd int, st *unix.Stat_t) time.Duration {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil || !localFS[uint32(fs.Type)] {
		return -1
	}
	if st.Ctim.Nsec == 0 {
		return 2 * time.Second
	}
	return 2*coarseTick() + 10*time.Millisecond
}
