//go:build !linux

package peer

import "net"

// CanTellTCP: nothing here tells who owns a TCP client.
const CanTellTCP = false

// TCP cannot tell here who owns the other end of a TCP connection.
func TCP(client, server *net.TCPAddr) (uid int, ino uint64, ok bool) { return 0, 0, false }
