//go:build windows

package engine

import (
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
	"golang.org/x/sys/windows"
)

const openNoFollow = 0

// keepDirsOpen is false here: a directory handle held open could keep its
// owner from removing or renaming it, so each use opens its own.
const keepDirsOpen = false

// linkCount is 1 here: os.FileInfo on Windows does not carry the number of
// links. openedLinks asks the opened handle instead.
func linkCount(fs.FileInfo) uint64 { return 1 }

func openedLinks(f *os.File, _ fs.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		// Unknown: refuse as if linked, fail closed.
		return 2
	}
	return uint64(info.NumberOfLinks)
}

// Drive letters other than the workspace's, UNC paths and device paths are
// absolute and fall outside the root; reserved device names are refused.
func checkPlatformSyntax(p string) error {
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `//`) {
		return invalid(p, "UNC and device paths are not workspace paths")
	}
	if v := filepath.VolumeName(p); v != "" && !filepath.IsAbs(p) {
		return invalid(p, "drive-relative paths such as C:x are ambiguous")
	}
	if strings.ContainsAny(p, `<>"|?*`) || strings.Contains(p[len(filepath.VolumeName(p)):], ":") {
		return invalid(p, "the path contains a character Windows does not allow in names")
	}
	return nil
}

func syncDirFile(f *os.File) error { return nil }

// dirSyncs does nothing: directories are not synced here (syncDirFile).
type dirSyncs struct{}

func startDirSyncs([]*os.File) dirSyncs { return dirSyncs{} }

func (dirSyncs) wait() []error { return nil }

func readRandom(b []byte) (int, error) { return rand.Read(b) }

const (
	syscallEMFILE = windows.ERROR_TOO_MANY_OPEN_FILES
	syscallENFILE = windows.ERROR_TOO_MANY_OPEN_FILES
)

var ioErrnos = []error{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_WRITE_PROTECT, windows.ERROR_CRC}

var errCrossDevice = windows.ERROR_NOT_SAME_DEVICE

// renameAt has no handle-relative form on Windows; returning errCrossDevice
// makes Edit write its temp file beside the target, as before.
func renameAt(*dirRef, string, *dirRef, string) error { return errCrossDevice }

// sameDirs reports whether each of prefixes is still the plain directory
// ids says it was.
func (w *Workspace) sameDirs(prefixes []string, ids []fs.FileInfo) bool {
	for i, p := range prefixes {
		fi, err := w.root.Lstat(filepath.FromSlash(p))
		if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || !os.SameFile(fi, ids[i]) {
			return false
		}
	}
	return true
}

// createIn makes the file name in d with mode perm (O_EXCL for excl,
// truncating otherwise).
func createIn(d *dirRef, name string, perm fs.FileMode, excl bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE
	if excl {
		flags |= os.O_EXCL
	} else {
		flags |= os.O_TRUNC
	}
	return d.root.OpenFile(name, flags, perm)
}

func tempAbandoned(dir *os.Root, name string) bool {
	fi, err := dir.Lstat(name)
	return err == nil && time.Since(fi.ModTime()) > time.Hour
}

// CrashPoint is a no-op here: the fault tests run on Unix.
func CrashPoint(string) {}

// processGone cannot ask about a process here without a handle: an entry an
// hour old is taken as abandoned.
func processGone(_ int, since time.Time) bool { return time.Since(since) > time.Hour }

// FileLock is a held per-file lock (Workspace.LockFile).
type FileLock struct{ l *fsx.Lock }

// lockIn takes the exclusive lock on the lock file name in LocksDir.
func (w *Workspace) lockIn(name string) (*FileLock, error) {
	d, err := w.acquireDir(LocksDir, true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	w.releaseDir(d)
	l, err := fsx.Acquire(filepath.Join(w.Dir, filepath.FromSlash(LocksDir), name))
	if err != nil {
		return nil, err
	}
	return &FileLock{l: l}, nil
}

// Release gives the lock up. Releasing a nil or released lock is a no-op.
func (l *FileLock) Release() error {
	if l == nil {
		return nil
	}
	return l.l.Release()
}
