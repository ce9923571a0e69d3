//go:build !unix

package mcpserver

import "io"

// pollableInput returns in: where there is no poller for pipes, reads block
// a thread as before.
func pollableInput(in io.Reader) (io.Reader, func()) { return in, func() {} }
