//go:build linux

package peer

import (
	"encoding/binary"
	"net"

	"golang.org/x/sys/unix"
)

// CanTellTCP: the kernel's socket table says who owns a TCP client.
const CanTellTCP = true

// TCP asks the kernel (sock_diag over netlink, as ss(8) does) which user
// owns the client end of a loopback TCP connection, and the inode of the
// client's socket (0 when no process holds it any more); ok is false if it
// cannot tell.
func TCP(client, server *net.TCPAddr) (uid int, ino uint64, ok bool) {
	family, src, dst := unix.AF_INET, client.IP.To4(), server.IP.To4()
	if src == nil || dst == nil {
		family, src, dst = unix.AF_INET6, client.IP.To16(), server.IP.To16()
	}
	if src == nil || dst == nil {
		return 0, 0, false
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_INET_DIAG)
	if err != nil {
		return 0, 0, false
	}
	defer unix.Close(fd)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 1})

	// struct nlmsghdr, then struct inet_diag_req_v2 naming one socket.
	const hdrLen, reqLen = 16, 56
	msg := make([]byte, hdrLen+reqLen)
	ne, be := binary.NativeEndian, binary.BigEndian
	ne.PutUint32(msg[0:], hdrLen+reqLen)
	ne.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	req := msg[hdrLen:]
	req[0], req[1] = byte(family), unix.IPPROTO_TCP
	ne.PutUint32(req[4:], ^uint32(0)) // every state
	be.PutUint16(req[8:], uint16(client.Port))
	be.PutUint16(req[10:], uint16(server.Port))
	copy(req[12:28], src)
	copy(req[28:44], dst)
	ne.PutUint32(req[48:], ^uint32(0)) // no cookie
	ne.PutUint32(req[52:], ^uint32(0))
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, 0, false
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil || n < hdrLen+72 || ne.Uint16(buf[4:]) != unix.SOCK_DIAG_BY_FAMILY {
		return 0, 0, false // NLMSG_ERROR: no such socket
	}
	// struct inet_diag_msg: idiag_uid follows family, state, timer,
	// retrans, the socket id and three counters; idiag_inode follows it.
	return int(ne.Uint32(buf[hdrLen+64:])), uint64(ne.Uint32(buf[hdrLen+68:])), true
}
