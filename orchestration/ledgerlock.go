package orchestration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/fsx"
)

// heldLock is a lock file kept open between uses, so that taking the lock
// costs a flock and one lstat instead of an open, a flock and a close. The
// lstat is what keeps it a lock: a lock file removed or replaced under a
// process that held it open would otherwise leave that process locking an
// inode no other process opens any more.
type heldLock struct {
	path string
	f    *os.File
	fi   os.FileInfo // f's identity, from fstat when it was opened
}

// lock blocks until it holds the exclusive lock on the file path names now.
func (h *heldLock) lock() error {
	for range 8 {
		if h.f == nil {
			if err := h.open(); err != nil {
				return fmt.Errorf("lock %s: %w", h.path, err)
			}
		}
		if err := fsx.LockFile(h.f); err != nil {
			h.drop()
			return fmt.Errorf("lock %s: %w", h.path, err)
		}
		pi, err := os.Lstat(h.path)
		if err == nil && os.SameFile(pi, h.fi) {
			return nil
		}
		// Removed or replaced while held: lock what the path names now.
		h.drop()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("lock %s: %w", h.path, err)
		}
	}
	return fmt.Errorf("lock %s: the lock file keeps being replaced; a program other than intentgate is changing it", h.path)
}

func (h *heldLock) open() error {
	flags := os.O_RDWR | os.O_CREATE | fsx.NoFollow | fsx.NonBlock
	f, err := os.OpenFile(h.path, flags, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(h.path, flags, 0o644)
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s): remove it", describeMode(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return err
	}
	h.f, h.fi = f, fi
	return nil
}

// unlock gives the lock up; on an error the file is closed, which gives it
// up too.
func (h *heldLock) unlock() {
	if h.f != nil && fsx.UnlockFile(h.f) != nil {
		h.drop()
	}
}

// drop closes the file (giving up a lock held on it); the next lock opens
// the path again.
func (h *heldLock) drop() {
	if h.f != nil {
		h.f.Close()
		h.f, h.fi = nil, nil
	}
}
