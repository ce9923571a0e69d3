// Package kernel is what package peer asks the kernel about a socket's
// peer, given the socket's descriptor: its credentials, and which
// executable a process runs. It links no net package, so that the hook
// process (which dials the daemon's socket itself) is a static executable;
// peer wraps it for net.Conn values.
package kernel

import "errors"

// ErrUnsupported is returned where the kernel cannot be asked; callers then
// rely on the socket file's permissions alone.
var ErrUnsupported = errors.New("peer credentials are not available on this system")

// Cred is the process at the other end of a connection.
type Cred struct {
	UID int
	PID int // 0 when the kernel does not say
}
