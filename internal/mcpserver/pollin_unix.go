//go:build unix

package mcpserver

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollableInput returns a reader of in that waits for input in Go's network
// poller instead of a thread blocked in read(2), and a function that undoes
// what it changed.
//
// Why: a goroutine blocked in read(2) on a pipe holds its P as if it ran.
// While a call then waits in fsync, every P of a 2-core machine looks busy,
// so the runtime's monitor thread (sysmon) takes a P back, and each time it
// does it goes back to waking every 20 µs. Through the poller, the waiting
// reader holds no P: in BenchmarkMCPWriteRatio (ext4) the retakes went from
// about 3.2 to 2.1 per call. The rest come from calls with two fsyncs
// running at once; sysmon still costs about 14% of the server's CPU there.
//
// Only pipes and sockets are changed (a terminal is shared with the shell,
// and regular files cannot be polled). O_NONBLOCK belongs to the open file,
// which the client made for this server; restore clears it again.
func pollableInput(in io.Reader) (io.Reader, func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	fd := -1
	if sc.Control(func(p uintptr) { fd = int(p) }) != nil || fd < 0 {
		return in, func() {}
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return in, func() {}
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return in, func() {}
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		return in, func() {} // already nonblocking: os.File polls it
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return in, func() {}
	}
	if unix.SetNonblock(dup, true) != nil {
		unix.Close(dup)
		return in, func() {}
	}
	pf := os.NewFile(uintptr(dup), f.Name()) // nonblocking, so polled
	return pf, func() {
		pf.Close()
		unix.SetNonblock(fd, false)
	}
}
