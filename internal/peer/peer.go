// Package peer asks the kernel who is at the other end of a Unix socket.
package peer

import (
	"errors"
	"net"
)

// ErrUnsupported is returned where the kernel cannot be asked; callers then
// rely on the socket file's permissions alone.
var ErrUnsupported = errors.New("peer credentials are not available on this system")

// Cred is the process at the other end of a connection.
type Cred struct {
	UID int
	PID int // 0 when the kernel does not say
}

// Of returns the credentials of the process connected through c, which must
// be a *net.UnixConn.
func Of(c net.Conn) (Cred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Cred{}, errors.New("not a unix socket")
	}
	return of(uc)
}
