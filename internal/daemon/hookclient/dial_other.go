//go:build !linux && !darwin

package hookclient

import (
	"context"
	"os"
	"time"

	"github.com/intentgate/intentgate/internal/peer/kernel"
)

// dialUnix: where the kernel cannot say who listens on a socket
// (CanVerifyPeer is false), the hook never uses the daemon's socket.
func dialUnix(context.Context, string, time.Duration) (*os.File, kernel.Cred, error) {
	return nil, kernel.Cred{}, kernel.ErrUnsupported
}
