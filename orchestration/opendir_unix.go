//go:build unix

package orchestration

import (
	"os"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens the directory dir for listing, failing when dir is a
// symlink or not a directory.
func openDirNoFollow(dir string) (*os.File, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		return os.NewFile(uintptr(fd), dir), nil
	}
}
