//go:build !linux && !darwin

package peer

import "net"

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = false

func of(*net.UnixConn) (Cred, error) { return Cred{}, ErrUnsupported }
