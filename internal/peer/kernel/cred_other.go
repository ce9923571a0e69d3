//go:build !linux && !darwin

package kernel

// CanAsk: the kernel gives the credentials of a Unix socket's peer.
const CanAsk = false

// FD cannot ask here.
func FD(uintptr) (Cred, error) { return Cred{}, ErrUnsupported }
