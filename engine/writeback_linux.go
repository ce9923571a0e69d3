package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2): f's data, and of its metadata only what reading
// the data back needs (its size, its blocks), not its times. A journal slot
// rewritten in place needs no more.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
