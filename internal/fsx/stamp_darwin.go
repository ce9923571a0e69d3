package fsx

import (
	"bytes"
	"time"

	"golang.org/x/sys/unix"
)

// settleOf says how long before a read the file's ctime must lie for its
// stamp to prove it unchanged later (Seen.Note): two seconds on the local
// file systems (HFS+ keeps whole seconds), never on others (a network file
// system stamps with the server's clock).
func settleOf(fd int, _ *unix.Stat_t) time.Duration {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return -1
	}
	name := string(bytes.TrimRight(fs.Fstypename[:], "\x00"))
	if name == "apfs" || name == "hfs" {
		return 2 * time.Second
	}
	return -1
}
