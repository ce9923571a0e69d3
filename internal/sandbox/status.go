package sandbox

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// A confined command's init cannot die of the signal that killed the
// command (as PID 1 of its namespace it is immune to its own signals), so it
// exits 128+N and tells the signal on a pipe the command never sees. The
// read ends are kept here per command until ExitSignal or the cleanup.
var statusPipes sync.Map // *exec.Cmd -> *statusPipe

type statusPipe struct{ r, w *os.File }

func (p *statusPipe) close() {
	if p == nil {
		return
	}
	p.r.Close()
	p.w.Close()
}

// ExitSignal reports the signal that killed a confined command, after Wait
// returned. It returns false when the command exited on its own, or was not
// confined.
func ExitSignal(cmd *exec.Cmd) (syscall.Signal, bool) {
	v, ok := statusPipes.LoadAndDelete(cmd)
	if !ok {
		return 0, false
	}
	p := v.(*statusPipe)
	defer p.close()
	// The init wrote before it exited, and Wait saw it exit: whatever it
	// wrote is in the pipe now. One read that does not wait (the parent
	// holds a write end too, so no end of file would come).
	rc, err := p.r.SyscallConn()
	if err != nil {
		return 0, false
	}
	var b [1]byte
	n := 0
	_ = rc.Read(func(fd uintptr) bool {
		n, _ = readNow(fd, b[:])
		return true
	})
	if n == 1 && b[0] > 0 && b[0] < 65 {
		return syscall.Signal(b[0]), true
	}
	return 0, false
}

func forgetStatus(cmd *exec.Cmd) {
	if v, ok := statusPipes.LoadAndDelete(cmd); ok {
		v.(*statusPipe).close()
	}
}
