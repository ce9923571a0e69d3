package daemon

import (
	"context"
	"io"
	"runtime"

	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/daemon/hookclient"
)

const isWindows = runtime.GOOS == "windows"

// CanVerifyPeer: the kernel says who listens on a socket. Where it cannot,
// the hook never uses the socket and the daemon makes none unless told to;
// the daemon's HTTP hooks still work.
const CanVerifyPeer = hookclient.CanVerifyPeer

// SocketName is the daemon's socket in .orchestration/.
const SocketName = hookclient.SocketName

// daemonDirHeader carries the workspace the hook process found, as it found
// it, to the daemon.
const daemonDirHeader = hookclient.DirHeader

// daemonReply is the socket protocol's answer (hookclient.Answer).
type daemonReply = hookclient.Answer

// Forward has the daemon serving a workspace handle an event, when one runs
// there (hookclient.Forward, the hook process's side of the socket).
func Forward(errw io.Writer) func(ctx context.Context, dir, agent string, raw []byte) (adapter.Reply, bool) {
	return hookclient.Forward(errw)
}
