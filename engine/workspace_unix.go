//go:build unix

package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// keepDirsOpen: directories stay open between calls (dirRef); a handle
// held open does not keep anyone from removing or renaming them here.
const keepDirsOpen = true

// O_NOFOLLOW refuses a symlink swapped in after the Lstat; O_NONBLOCK keeps
// an open of a FIFO swapped in from hanging (the fstat check then refuses it).
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openedLinks is the link count of an opened file, whose fstat gave fi; on
// Unix fi already has it.
func openedLinks(_ *os.File, fi fs.FileInfo) uint64 { return linkCount(fi) }

// A backslash is a legal byte in a Unix name, but the same input means a
// separator on Windows: refuse it rather than let two layers disagree.
func checkPlatformSyntax(p string) error {
	if strings.ContainsRune(p, '\\') {
		return invalid(p, `the path contains a backslash; use "/" as the separator`)
	}
	// "C:/x" is a relative name here and an absolute path on Windows; the
	// scope matcher refuses it as absolute, so refuse it here as what it is.
	if len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z') {
		return invalid(p, "the path starts with a Windows drive letter; use a workspace-relative path")
	}
	return nil
}

func syncDirFile(f *os.File) error {
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// dirSyncs is syncDirFile for several directories at the same time,
// started by startDirSyncs.
type dirSyncs struct{ s *Syncing }

func startDirSyncs(dirs []*os.File) dirSyncs { return dirSyncs{StartSync(dirs...)} }

func (d dirSyncs) wait() []error {
	errs := d.s.Wait()
	for i, err := range errs {
		if errors.Is(err, syscall.EINVAL) {
			errs[i] = nil
		}
	}
	return errs
}

func readRandom(b []byte) (int, error) { return rand.Read(b) }

const (
	syscallEMFILE = syscall.EMFILE
	syscallENFILE = syscall.ENFILE
)

var ioErrnos = []error{syscall.EIO, syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS}

var errCrossDevice = syscall.EXDEV

// renameAt moves from in fromDir to to in toDir through the directories'
// handles, so that no path is resolved again between the checks and the
// rename.
func renameAt(fromDir *dirRef, from string, toDir *dirRef, to string) error {
	if err := unix.Renameat(int(fromDir.f.Fd()), from, int(toDir.f.Fd()), to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// sameDirs reports whether each of prefixes (canonical paths, from the top)
// is still the plain directory ids says it was: one fstatat each, relative
// to the workspace root, not following a final symlink.
func (w *Workspace) sameDirs(prefixes []string, ids []fs.FileInfo) bool {
	fd := int(w.rootF.Fd())
	var st unix.Stat_t
	for i, p := range prefixes {
		if unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
		was, ok := ids[i].Sys().(*syscall.Stat_t)
		if !ok || uint64(was.Dev) != uint64(st.Dev) || uint64(was.Ino) != uint64(st.Ino) {
			return false
		}
	}
	return true
}

// createIn makes the file name in d, not following a symlink, with mode
// perm (O_EXCL for excl, truncating otherwise). A plain openat: none of the
// poller set-up an os.File opened by name gets.
func createIn(d *dirRef, name string, perm fs.FileMode, excl bool) (*os.File, error) {
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if excl {
		flags |= unix.O_EXCL
	} else {
		// A FIFO put in the file's place must fail the open, not hang it.
		flags |= unix.O_TRUNC | unix.O_NONBLOCK
	}
	for {
		fd, err := unix.Openat(int(d.f.Fd()), name, flags, uint32(perm))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// tempAbandoned reports whether the temp file name was left by a process
// that is gone.
func tempAbandoned(dir *os.Root, name string) bool {
	i := strings.LastIndex(name, ".intentgate-")
	if i < 0 {
		return tempOld(dir, name)
	}
	pidStr, _, _ := strings.Cut(name[i+len(".intentgate-"):], "-")
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return tempOld(dir, name)
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func tempOld(dir *os.Root, name string) bool {
	fi, err := dir.Lstat(name)
	return err == nil && time.Since(fi.ModTime()) > time.Hour
}

// CrashPoint kills the process when the fault tests ask for it (FaultEnv in
// orchestration): a real SIGKILL at an exact point of a write.
func CrashPoint(name string) {
	if v := os.Getenv("INTENTGATE_TEST_FAULT"); v != "" && faultListed(v, name) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

func processGone(pid int, _ time.Time) bool {
	return pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// FileLock is a held per-file lock (Workspace.LockFile).
type FileLock struct{ fd int }

// lockIn takes the exclusive lock on the lock file name in LocksDir, made if
// missing, opened through the verified handle of the directory.
func (w *Workspace) lockIn(name string) (*FileLock, error) {
	d, err := w.acquireDir(LocksDir, true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	defer w.releaseDir(d)
	var fd int
	for {
		fd, err = unix.Openat(int(d.f.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return &FileLock{fd: fd}, nil
}

// Release gives the lock up. Releasing a nil or released lock is a no-op.
func (l *FileLock) Release() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	err := unix.Flock(l.fd, unix.LOCK_UN)
	if cerr := unix.Close(l.fd); err == nil {
		err = cerr
	}
	l.fd = -1
	return err
}
