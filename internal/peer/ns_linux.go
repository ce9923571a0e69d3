//go:build linux

package peer

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

const hasNamespaces = true

// samePIDNamespace compares the PID namespace of pid with this process's.
func samePIDNamespace(pid int) (bool, error) {
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return false, err
	}
	other, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return false, err
	}
	return self == other, nil
}

// CheckSocketHolders fails with ErrConfined when a process in another PID
// namespace than this one holds the socket with inode ino (the client end
// of a loopback connection, as the kernel's socket table names it), and with
// ErrOrphan when ino is 0. Only the processes of other PID namespaces are
// searched, so the cost is one readlink per process plus the file
// descriptors of the confined ones.
func CheckSocketHolders(ino uint64) error {
	if ino == 0 {
		return ErrOrphan
	}
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return fmt.Errorf("cannot read this process's PID namespace: %w", err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	want := "socket:[" + strconv.FormatUint(ino, 10) + "]"
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		base := "/proc/" + e.Name()
		ns, err := os.Readlink(base + "/ns/pid")
		if err != nil || ns == self {
			// Another user's process (the uid check answers for
			// those), one that exited, or one of this namespace.
			continue
		}
		fds, err := os.ReadDir(base + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(base + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:") && l == want {
				return fmt.Errorf("%w (process %s)", ErrConfined, e.Name())
			}
		}
	}
	return nil
}
