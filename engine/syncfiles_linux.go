package engine

import (
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux's asynchronous I/O takes fsync requests (IOCB_CMD_FSYNC, since
// Linux 4.18): io_submit hands them to the kernel, which runs them at the
// same time on its own workers, and io_getevents waits for all of them in
// one blocking system call. The Go runtime sees at most one thread in a
// system call: its other processor stays idle, so its monitor neither
// takes a processor back from a blocked thread nor starts a thread for it.

// aioIocb is the kernel's struct iocb (64 bytes): aio_data, then aio_key
// and aio_rw_flags (which swap places on big-endian machines; both stay
// zero here), aio_lio_opcode, aio_reqprio, aio_fildes, and aio_buf,
// aio_nbytes, aio_offset, a reserved word, aio_flags and aio_resfd, all
// zero for an fsync.
type aioIocb struct {
	data   uint64
	_      [2]uint32
	opcode uint16
	_      int16
	fd     uint32
	_      [4]uint64
	_      [2]uint32
}

// aioEvent is the kernel's struct io_event.
type aioEvent struct {
	data uint64
	_    uint64 // obj
	res  int64
	_    int64 // res2
}

const aioCmdFsync = 2

var (
	_ [64 - unsafe.Sizeof(aioIocb{})]struct{} // exactly 64 bytes
	_ [unsafe.Sizeof(aioIocb{}) - 64]struct{}
	_ [32 - unsafe.Sizeof(aioEvent{})]struct{}
	_ [unsafe.Sizeof(aioEvent{}) - 32]struct{}
)

// aioMaxFiles bounds the requests of one context: StartSync hands more
// files than that to goroutines.
const aioMaxFiles = 16

// aioOff is set once the kernel turned asynchronous I/O down (ENOSYS,
// EPERM from a seccomp filter): StartSync then always uses goroutines.
var aioOff atomic.Bool

// aioFree holds idle contexts, so that a call reuses one rather than
// setting one up (a few pages of the kernel's) each time.
var aioFree = make(chan uintptr, 8)

func aioGet() (uintptr, bool) {
	select {
	case ctx := <-aioFree:
		return ctx, true
	default:
	}
	var ctx uintptr
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, aioMaxFiles, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		if e == unix.ENOSYS || e == unix.EPERM {
			aioOff.Store(true)
		}
		return 0, false
	}
	return ctx, true
}

func aioPut(ctx uintptr) {
	select {
	case aioFree <- ctx:
	default:
		unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
	}
}

// aioBatch is the requests of one StartSync in the kernel.
type aioBatch struct {
	ctx      uintptr
	inFlight int
}

// start submits an fsync of each file. A request the kernel refuses (a
// file system whose files take no asynchronous fsync) is replaced by
// fsync(2) here, at once. false means nothing was started: the caller
// syncs files its own way.
func (b *aioBatch) start(files []*os.File, errs []error) bool {
	if len(files) > aioMaxFiles || aioOff.Load() {
		return false
	}
	ctx, ok := aioGet()
	if !ok {
		return false
	}
	b.ctx = ctx
	var cbs [aioMaxFiles]aioIocb
	var ptrs [aioMaxFiles]*aioIocb
	for i, f := range files {
		cbs[i] = aioIocb{data: uint64(i), opcode: aioCmdFsync, fd: uint32(f.Fd())}
		ptrs[i] = &cbs[i]
	}
	for next := 0; next < len(files); {
		n, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, ctx, uintptr(len(files)-next), uintptr(unsafe.Pointer(&ptrs[next])))
		switch {
		case e == unix.EINTR:
		case e != 0 || n == 0:
			// The request at next was refused: that file is synced
			// here, the ones after it are submitted again.
			errs[next] = files[next].Sync()
			next++
		default:
			b.inFlight += int(n)
			next += int(n)
		}
	}
	runtime.KeepAlive(files)
	return true
}

// wait collects the results of the requests start submitted.
func (b *aioBatch) wait(files []*os.File, errs []error) {
	var evs [aioMaxFiles]aioEvent
	for b.inFlight > 0 {
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, b.ctx, uintptr(b.inFlight), uintptr(b.inFlight), uintptr(unsafe.Pointer(&evs[0])), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			// Not seen with a valid context. What is still in flight
			// cannot be told apart, so every file not known to have
			// failed is synced again the plain way: none is reported
			// synced that may not be. The context is dropped with
			// whatever it still holds.
			for i, f := range files {
				if errs[i] == nil {
					errs[i] = f.Sync()
				}
			}
			unix.Syscall(unix.SYS_IO_DESTROY, b.ctx, 0, 0)
			runtime.KeepAlive(files)
			return
		}
		for _, ev := range evs[:n] {
			if ev.res < 0 && ev.data < uint64(len(files)) {
				errs[ev.data] = &os.PathError{Op: "sync", Path: files[ev.data].Name(), Err: unix.Errno(-ev.res)}
			}
		}
		b.inFlight -= int(n)
	}
	runtime.KeepAlive(files)
	aioPut(b.ctx)
}
