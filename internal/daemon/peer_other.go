//go:build !linux && !darwin

package daemon

import (
	"errors"
	"net"
	"runtime"
)

const isWindows = runtime.GOOS == "windows"

// CanVerifyPeer: nothing here tells who listens on a socket, so the hook never
// uses one and the daemon makes none unless told to.
const CanVerifyPeer = false

// verifyPeer cannot tell here who listens on the socket, so the hook never
// trusts it and does its work itself; the daemon's HTTP hooks still work.
func verifyPeer(net.Conn) error {
	return errors.New("the process behind a socket cannot be checked on " + runtime.GOOS)
}

// tcpPeerUID cannot tell here who owns the other end of a TCP connection.
func tcpPeerUID(client, server *net.TCPAddr) (int, bool) { return 0, false }

// canTellTCPPeer: nothing here tells who owns a TCP client.
const canTellTCPPeer = false

func tcpPeer(client, server *net.TCPAddr) (int, uint64, bool) { return 0, 0, false }
