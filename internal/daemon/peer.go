package daemon

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"github.com/intentgate/intentgate/internal/peer"
)

const isWindows = runtime.GOOS == "windows"

// CanVerifyPeer: the kernel says who listens on a socket. Where it cannot,
// the hook never uses the socket and the daemon makes none unless told to;
// the daemon's HTTP hooks still work.
const CanVerifyPeer = peer.CanAsk

// verifyPeer checks, through the kernel's record of who listens on the
// socket, that it is this user running this executable.
func verifyPeer(c net.Conn) error {
	cr, err := peer.Unix(c)
	if err != nil {
		return err
	}
	if cr.UID != os.Geteuid() {
		return fmt.Errorf("the socket's process runs as uid %d", cr.UID)
	}
	return peer.SameExecutable(cr.PID)
}
