//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is set up here with its three system calls, on the calling thread
// only. Restricting every thread of a Go process needs either ABI 8's TSYNC
// or a library that signals each thread it finds in /proc/<getpid>/task; the
// latter is wrong wherever /proc belongs to an outer PID namespace (Claude
// Code 2.1.331 runs commands so): it signalled the threads of some other
// process and waited for them forever, or failed to find the directory. The
// init instead confines its own thread and then executes itself again
// (init_linux.go): a process image started from a confined thread is
// confined as a whole.

// Access rights, as the kernel numbers them.
const (
	llRead  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// The rights that apply to a file (the others only to directories).
	llFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every file access right the kernel's ABI controls, up to
// ABI 8: ABI 9 adds connecting to Unix sockets by path, which would refuse
// every socket outside the sandbox (ssh-agent, the container runtime).
func handledFS(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: execute through make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// scopes keeps, from ABI 6, the command's signals and abstract Unix socket
// connections inside its own domain. The network stays open (commands fetch
// packages).
func scopes(abi int) uint64 {
	if abi >= 6 {
		return unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	return 0
}

// llRule grants access beneath each path; missing paths are skipped when
// optional, refused otherwise.
type llRule struct {
	access   uint64
	paths    []string
	optional bool
}

// landlockRules is what the command may do: read and execute everywhere,
// write beneath sp.Writable, use the usual devices.
func landlockRules(sp *spec) []llRule {
	var dirs, files []string
	for _, w := range sp.Writable {
		fi, err := os.Stat(w)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			dirs = append(dirs, w)
		default:
			files = append(files, w)
		}
	}
	rwDirs := uint64(llRead | llWrite)
	if sp.ABI >= 2 {
		// Renames and links between directories of the writable roots
		// (npm moves packages out of its staging directory).
		rwDirs |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	rwFiles := uint64((llRead | llWrite) & llFile)
	ioctl := uint64(unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	return []llRule{
		{access: llRead, paths: []string{"/"}},
		{access: rwDirs, paths: dirs},
		{access: rwFiles, paths: files},
		{access: rwFiles | ioctl, paths: []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}, optional: true},
		{access: uint64(llRead|llWrite) | ioctl, paths: []string{"/dev/pts", "/dev/shm"}, optional: true},
	}
}

// restrictThread confines the calling thread (and what it executes) to
// sp's rules. The caller must have locked its goroutine to the thread.
func restrictThread(sp *spec) error {
	if sp.ABI < 1 {
		return fmt.Errorf("the kernel offers no Landlock")
	}
	handled := handledFS(sp.ABI)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled, Scoped: scopes(sp.ABI)}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(r)
	defer unix.Close(ruleset)
	for _, rule := range landlockRules(sp) {
		access := rule.access & handled
		if access == 0 {
			continue
		}
		for _, p := range rule.paths {
			if err := addLandlockPath(ruleset, p, access); err != nil {
				if rule.optional && errors.Is(err, unix.ENOENT) {
					continue
				}
				return fmt.Errorf("the rule for %s: %w", p, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

func addLandlockPath(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFile // the kernel refuses directory rights on a file
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule: %w", errno)
	}
	return nil
}
