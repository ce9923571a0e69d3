//go:build unix

package orchestration

import (
	"os"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens the directory dir for listing, failing when dir is a
// symlink or not a directory. It also returns the directory's stamp, taken
// before the listing, and how settled it must be to prove the listing
// unchanged later (fsx.Seen.Note).
func openDirNoFollow(dir string) (*os.File, fsx.Stamp, time.Duration, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fsx.Stamp{}, 0, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		st, settle, err := fsx.StampFd(fd)
		if err != nil {
			settle = -1
		}
		return os.NewFile(uintptr(fd), dir), st, settle, nil
	}
}
