//go:build !linux && !darwin

package fsx

import (
	"errors"
	"io"
	"os"
	"time"
)

// Where stat gives no inode change time in a portable form (Windows), a
// stamp is never known and a File reads its file every time.

func stampPath(path string, follow bool) (Stamp, error) {
	var err error
	if follow {
		_, err = os.Stat(path)
	} else {
		_, err = os.Lstat(path)
	}
	return Stamp{}, err
}

func readStamped(path string, flags int) ([]byte, Stamp, time.Duration, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|NonBlock|flags, 0)
	if err != nil {
		return nil, Stamp{}, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, Stamp{}, 0, &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, Stamp{}, 0, err
	}
	return data, Stamp{}, -1, nil
}

// StampFd returns the zero Stamp, which proves nothing.
func StampFd(int) (Stamp, time.Duration, error) { return Stamp{}, -1, nil }
