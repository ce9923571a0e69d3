//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initFailed is the init's exit status when the sandbox could not be set up;
// the command did not run.
const initFailed = 125

func initMain(arg string) int {
	// Landlock, no_new_privs and the capability sets below are the
	// thread's own: everything runs on this one thread (package
	// initialisation holds it already).
	runtime.LockOSThread()
	var sp spec
	if err := json.Unmarshal([]byte(arg), &sp); err != nil {
		fmt.Fprintln(os.Stderr, "intentgate sandbox: bad init argument:", err)
		return initFailed
	}
	if sp.Confined {
		return confinedMain(&sp)
	}
	if err := setup(&sp); err != nil {
		fmt.Fprintln(os.Stderr, "intentgate sandbox: cannot confine the command, so it did not run:", err)
		return initFailed
	}
	if sp.Probe {
		return 0
	}
	// Only this thread is confined. Executing the init again from it
	// starts a process image that is confined as a whole, and that one
	// runs the command.
	sp.Confined = true
	js, err := json.Marshal(sp)
	if err == nil {
		err = syscall.Exec("/proc/self/exe", []string{"intentgate-sandbox", initArg, string(js)}, os.Environ())
	}
	fmt.Fprintln(os.Stderr, "intentgate sandbox: cannot start the confined init, so the command did not run:", err)
	return initFailed
}

// confinedMain is the init's second stage, executed from the confined
// thread of the first: it runs and supervises the command.
func confinedMain(sp *spec) int {
	// The first stage set no_new_privs just before Landlock; an init
	// without it was not started by a first stage.
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		fmt.Fprintln(os.Stderr, "intentgate sandbox: the init is not confined, so the command did not run")
		return initFailed
	}
	keepStatusFromCommand(sp)
	if !sp.Namespaces {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "intentgate sandbox: cannot become the subreaper of the command, so it did not run:", err)
			return initFailed
		}
	}
	return supervise(sp)
}

// setup confines this thread, and so what it executes: read-only bind mounts
// over the governance paths (in the mount namespace), Landlock, no
// capabilities left.
func setup(sp *spec) error {
	if sp.Namespaces {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("private mounts: %w", err)
		}
		for _, p := range sp.ReadOnly {
			if err := bindReadOnly(p); err != nil {
				return fmt.Errorf("making %s read-only: %w", p, err)
			}
		}
		for _, p := range sp.Hidden {
			if err := hide(p); err != nil {
				return fmt.Errorf("hiding %s: %w", p, err)
			}
		}
		if sp.NoNetwork {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("the loopback interface of the command's network namespace: %w", err)
			}
		}
		// A /proc of the command's own PID namespace: it sees, and can
		// signal, only its own processes. Where a /proc cannot be
		// mounted the host's stays, and the namespace still hides the
		// other processes from kill(2).
		_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	if err := restrictThread(sp); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	// Without namespaces the command runs in the caller's user namespace:
	// as root there it would keep every capability (loading a kernel
	// module needs no file Landlock controls). Other users hold none to
	// pass on, since no_new_privs ignores file capabilities.
	if sp.Namespaces || os.Geteuid() == 0 {
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("dropping capabilities: %w", err)
		}
	}
	return nil
}

// bindReadOnly mounts p over itself read-only. The flags the kernel locked
// on the mount below (nosuid, nodev...) must be kept, or the remount fails.
func bindReadOnly(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// mount(2) would follow the link; the link itself sits in a
		// writable directory and cannot be protected by a mount.
		return nil
	}
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// hide mounts an empty read-only tmpfs over the directory p.
func hide(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("not a directory")
	}
	return unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500")
}

// loopbackUp brings up lo, the only interface of a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropCapabilities leaves the command none in its user namespace, even when it
// runs as uid 0 there: no ambient or inheritable set, an empty bounding set
// (an executed program's capabilities come from these; root's from the
// inheritable and bounding sets).
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		// Only those still in the set: dropping needs CAP_SETPCAP,
		// which a process whose set is already empty may lack.
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil || in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// supervise runs the command, reaps whatever is reparented here, and when
// the command ends, or a stop signal arrives, kills every process it left.
func supervise(sp *spec) int {
	path := sp.Argv[0]
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "intentgate sandbox: %v\n", err)
			return 127
		}
		path = lp
	}
	wd, _ := os.Getwd()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	pid, err := syscall.ForkExec(path, sp.Argv, &syscall.ProcAttr{
		Dir: wd, Env: os.Environ(), Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "intentgate sandbox: cannot run %s: %v\n", sp.Argv[0], err)
		return 127
	}
	go func() {
		s := <-sigs
		killAll(sp.Namespaces)
		code := 128
		if n, ok := s.(syscall.Signal); ok {
			code += int(n)
		}
		os.Exit(code)
	}()
	code := 0
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			break
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			code = 128 + int(ws.Signal())
			reportSignal(sp, ws.Signal())
		}
		break
	}
	killAll(sp.Namespaces)
	return code
}

// killWait bounds how long the init works at ending the command's processes
// once it is over; every round kills each one it finds, so only a process it
// cannot see or signal lasts that long.
const killWait = 5 * time.Second

// killAll ends every process the command left. In a PID namespace that is
// every other process in it (and the kernel kills them anyway when the init
// exits); without one, every descendant of this subreaper, in rounds until
// none is left, since one may fork while the others die.
func killAll(namespace bool) {
	if namespace {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		return
	}
	deadline := time.Now().Add(killWait)
	pause := time.Millisecond
	for {
		kids := descendants(procSelf())
		for _, k := range kids {
			if local := localPID(k); local > 1 && local != os.Getpid() {
				_ = syscall.Kill(local, syscall.SIGKILL)
			}
		}
		if reapAll() && len(kids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "intentgate sandbox: %d processes of the command could not be ended (pids %v as /proc numbers them)\n", len(kids), kids)
			return
		}
		// The killed need a moment to die and be reparented here.
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// reapAll collects every child that has ended, without waiting, and reports
// whether none is left.
func reapAll() bool {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ECHILD {
			return true
		}
		if err != nil || got <= 0 {
			return false
		}
	}
}

// procSelf is this process's pid as /proc numbers it. /proc may belong to
// an outer PID namespace: Claude Code 2.1.331's sandbox runs commands in a
// nested PID namespace under the /proc of bubblewrap's, where getpid and
// /proc disagree, and walking /proc from getpid found strangers (and killed
// the init itself).
func procSelf() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return os.Getpid()
}

// localPID is the pid of /proc's process n in this process's own PID
// namespace: the field of its NSpid at the depth of this process's own
// (a descendant lives in this namespace or below it). 0 when that cannot be
// read, since killing /proc's number could end an unrelated process.
func localPID(n int) int {
	self := nspid("self")
	if self == nil {
		return n // a kernel without NSpid (before 4.1): one namespace
	}
	if self[0] == os.Getpid() {
		return n // /proc is this namespace's: its numbers are ours
	}
	f := nspid(strconv.Itoa(n))
	if len(f) < len(self) {
		return 0
	}
	return f[len(self)-1]
}

// nspid is the NSpid line of /proc/<who>/status, outermost namespace first.
func nspid(who string) []int {
	b, err := os.ReadFile(filepath.Join("/proc", who, "status"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			var out []int
			for _, x := range strings.Fields(rest) {
				v, err := strconv.Atoi(x)
				if err != nil {
					return nil
				}
				out = append(out, v)
			}
			return out
		}
	}
	return nil
}

// descendants lists the processes below pid (as /proc numbers them), from
// /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[n] = pp
	}
	var out []int
	for n := range parent {
		for p, hops := parent[n], 0; p != 0 && hops < 4096; p, hops = parent[p], hops+1 {
			if p == pid {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
