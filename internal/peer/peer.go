// Package peer asks the kernel who is at the other end of a socket (a Unix
// socket's credentials, a loopback TCP client's owner), which executable a
// process runs, and whether that process is one of the commands intentgate
// confines. It is the one place that asks: the daemon, its clients and the
// IPC server all judge peers through it.
package peer

import (
	"errors"
	"fmt"
	"net"

	"github.com/intentgate/intentgate/internal/peer/kernel"
)

// ErrUnsupported is returned where the kernel cannot be asked; callers then
// rely on the socket file's permissions alone.
var ErrUnsupported = kernel.ErrUnsupported

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = kernel.CanAsk

// ErrConfined is returned, wrapped, for a peer that runs in another PID
// namespace than this process: on Linux every command intentgate runs for an
// agent runs in a PID namespace of its own, so such a peer is a confined
// command (or something inside a container), never the agent's hook nor a
// person's client. Its requests would let the command speak for the agent.
var ErrConfined = errors.New("the connecting process runs in another PID namespace (a confined command); intentgate answers only processes outside the sandbox")

// ErrOrphan is returned for a TCP connection whose client end no process
// holds any more (it sent its request and closed): who sent it cannot be
// told, so it is not answered.
var ErrOrphan = errors.New("no process holds the client end of the connection any more")

// Cred is the process at the other end of a connection.
type Cred = kernel.Cred

// Of returns the credentials of the process connected through c, which must
// be a *net.UnixConn. It fails with ErrConfined when that process runs in
// another PID namespace (Linux).
func Of(c net.Conn) (Cred, error) {
	cr, err := Unix(c)
	if err != nil {
		return cr, err
	}
	if err := CheckNamespace(cr.PID); err != nil {
		return cr, err
	}
	return cr, nil
}

// Unix returns the credentials the kernel recorded for the process at the
// other end of c, which must be a *net.UnixConn, without judging them: a
// client uses it to check the server it reached (its own daemon), where the
// namespace check of Of does not apply. ErrUnsupported where CanAsk is false.
func Unix(c net.Conn) (Cred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Cred{}, errors.New("not a unix socket")
	}
	if !CanAsk {
		return Cred{}, ErrUnsupported
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Cred{}, err
	}
	var cr Cred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cr, cerr = kernel.FD(fd) }); err != nil {
		return Cred{}, err
	}
	return cr, cerr
}

// SameExecutable fails unless process pid runs this process's executable.
func SameExecutable(pid int) error { return kernel.SameExecutable(pid) }

// SameExecutableAs fails unless process pid runs this process's executable
// or one of the files at paths.
func SameExecutableAs(pid int, paths ...string) error {
	return kernel.SameExecutableAs(pid, paths...)
}

// CheckNamespace fails with ErrConfined when the process pid runs in another
// PID namespace than this one, and when that cannot be told for a process
// the kernel named (it may have exited: its pid may already be another's).
// A pid of 0 is a process the kernel cannot name in this namespace. Where
// the kernel has no PID namespaces it does nothing.
func CheckNamespace(pid int) error {
	if !hasNamespaces {
		return nil
	}
	if pid <= 0 {
		return fmt.Errorf("%w (a process this PID namespace cannot see)", ErrConfined)
	}
	same, err := samePIDNamespace(pid)
	if err != nil {
		return fmt.Errorf("%w (process %d: %v)", ErrConfined, pid, err)
	}
	if !same {
		return fmt.Errorf("%w (process %d)", ErrConfined, pid)
	}
	return nil
}
