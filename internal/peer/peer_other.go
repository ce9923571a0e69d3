//go:build !linux && !darwin

package peer

import "net"

func of(*net.UnixConn) (Cred, error) { return Cred{}, ErrUnsupported }
