// Package fsx holds the durable file primitives every layer needs: an exclusive
// cross-process lock, atomic replace, and directory fsync. It is a leaf: it imports
// nothing of ours and holds no policy, so orchestration, engine and tools may all use it.
package fsx

import (
	"fmt"
	"os"
	"path/filepath"
)

// Lock is an exclusive advisory lock held on a lock file. It excludes other
// processes and, because each Lock opens its own file description, other
// goroutines of the same process too.
type Lock struct {
	f *os.File
}

// Acquire blocks until it holds the exclusive lock on path, creating the lock
// file (and its directory) if needed. The lock file is never removed: removing
// it would let two holders lock two different inodes.
func Acquire(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|NoFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// LockFile blocks until it holds the exclusive lock on the open file f, for a
// caller that keeps a lock file open between uses: it then owns the checks
// Acquire makes by opening the path (that the path still names f).
func LockFile(f *os.File) error { return lockFile(f) }

// UnlockFile gives up the lock LockFile took on f.
func UnlockFile(f *os.File) error { return unlockFile(f) }

// File is the open lock file, for a caller that keeps a few bytes in it
// (read and written only while the lock is held, or read knowing that a
// write may be in progress).
func (l *Lock) File() *os.File { return l.f }

// Release gives the lock up. Releasing a nil or released lock is a no-op.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// WriteFile atomically replaces path with data: it writes a temporary file in
// the same directory, fsyncs it, renames it over path and fsyncs the directory,
// so a reader sees either the old bytes or the new ones, and a crash leaves one
// of the two.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Replace(path, data, perm, Durable)
}

// Durability says how much of a crash a replaced file must survive. Each
// fsync costs milliseconds on ordinary disks, so files that can be rebuilt or
// safely lost pay for less.
type Durability int

const (
	// Durable: the new bytes survive a crash (file and directory fsynced).
	Durable Durability = iota
	// Settled: the new bytes are on disk before they become visible, so a
	// crash leaves the old file or the complete new one, never a torn one;
	// the rename itself may be lost. For state whose loss only costs a
	// repeated step (a session's read hashes).
	Settled
	// Derived: rewritten in place, no fsync. Creating a file costs more
	// than rewriting one, and a reader or a crash may see a torn file, so
	// this is only for files read under the writer's lock and rebuilt from
	// others when damaged (the intent map's summary).
	Derived
	// Renamed: written to a temporary file and renamed over the old one,
	// no fsync. A reader never sees a torn file; a crash may lose the new
	// bytes (the old file stays) and, on file systems that do not order a
	// rename after the data it replaces, may leave a torn file that the
	// reader must refuse. For state whose loss is safe and which is written
	// on every call (a session's read hashes and usage counters).
	Renamed
)

// Replace atomically replaces path with data at durability d.
func Replace(path string, data []byte, perm os.FileMode, d Durability) error {
	if d == Derived {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|NoFollow, perm)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if d != Renamed {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := rename(name, path); err != nil {
		return err
	}
	ok = true
	if d != Durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that a rename or create inside it is durable.
// It is a no-op where directories cannot be synced (Windows).
func SyncDir(dir string) error {
	return syncDir(dir)
}
