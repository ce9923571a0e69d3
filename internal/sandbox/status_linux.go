//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// statusFD is the init's descriptor of the status pipe: the first extra
// file of its exec.Cmd.
const statusFD = 3

// newStatusPipe makes the status pipe of a confined command's init and names
// it in sp; nil when no pipe can be made (the signal then shows as exit
// 128+N).
func newStatusPipe(sp *spec) *statusPipe {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	sp.StatusFD = statusFD
	return &statusPipe{r: r, w: w}
}

// attach hands the write end to the init of cmd. The parent's copy stays
// open until ExitSignal or the cleanup: a read after Wait, with a deadline
// of now, finds what the init wrote.
func (p *statusPipe) attach(cmd *exec.Cmd) {
	if p == nil {
		return
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles[:0], p.w)
	statusPipes.Store(cmd, p)
}

// keepStatusFromCommand keeps the status pipe from the command the init
// runs: it is the init's alone.
func keepStatusFromCommand(sp *spec) {
	if sp.StatusFD > 0 {
		syscall.CloseOnExec(sp.StatusFD)
	}
}

// reportSignal tells the parent the command died of sig.
func reportSignal(sp *spec, sig syscall.Signal) {
	if sp.StatusFD > 0 {
		_, _ = syscall.Write(sp.StatusFD, []byte{byte(sig)})
	}
}

// readNow reads what the non-blocking pipe holds, without waiting.
func readNow(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }
