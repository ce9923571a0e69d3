//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spec is what the init is told, as JSON in its argument.
type spec struct {
	Namespaces bool     `json:"ns"`
	ABI        int      `json:"abi"`
	Argv       []string `json:"argv"`
	Writable   []string `json:"rw"`
	ReadOnly   []string `json:"ro"`
	Temp       string   `json:"tmp"`
	Hidden     []string `json:"hide,omitempty"`
	NoNetwork  bool     `json:"nonet,omitempty"`
	// Probe: set up and exit 0 without running anything.
	Probe bool `json:"probe,omitempty"`
	// StatusFD is the init's status pipe (status_linux.go), 0 for none.
	StatusFD int `json:"sfd,omitempty"`
	// Confined: the init's first stage confined the thread that executed
	// this second stage, which runs the command (init_linux.go). Never
	// set by the parent.
	Confined bool `json:"confined,omitempty"`
}

var (
	probeOnce sync.Once
	probeMech Mechanism
	probeWhy  string
)

// probe finds the strongest mechanism once per process: Landlock is
// required; namespaces are used when an init can actually set them up here
// (containers and Ubuntu's AppArmor policy often forbid it). The environment
// variable INTENTGATE_SANDBOX=landlock forces the weaker mode, for tests.
func probe() (Mechanism, string) {
	probeOnce.Do(func() {
		abi := landlockABI()
		if abi < 1 {
			probeMech, probeWhy = None, "the kernel offers no Landlock (it needs Linux 5.13 or later with Landlock enabled in the lsm= boot parameter)"
			return
		}
		probeMech = LandlockOnly
		if os.Getenv("INTENTGATE_SANDBOX") == "landlock" {
			return
		}
		dir, err := os.MkdirTemp("", "intentgate-probe-")
		if err != nil {
			return
		}
		defer os.RemoveAll(dir)
		sp := spec{Namespaces: true, ABI: abi, Probe: true, ReadOnly: []string{dir}, Writable: []string{dir}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd, err := initCmd(ctx, sp)
		if err != nil {
			return
		}
		if out, err := cmd.CombinedOutput(); err == nil {
			probeMech = Namespaces
		} else {
			probeWhy = fmt.Sprintf("user namespaces unavailable (%v %s); Landlock alone confines commands", err, strings.TrimSpace(string(out)))
		}
	})
	return probeMech, probeWhy
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(abi)
}

func confined(ctx context.Context, mech Mechanism, p *Policy, dir, temp string, argv []string) (*exec.Cmd, error) {
	sp := spec{Namespaces: mech == Namespaces, ABI: landlockABI(), Argv: argv, Temp: temp,
		Writable: append(append([]string{}, p.Writable...), temp)}
	if mech == Namespaces {
		sp.ReadOnly = p.ReadOnly
		sp.Hidden = p.Hidden
		sp.NoNetwork = p.NoNetwork
	} else {
		if p.NoNetwork {
			return nil, fmt.Errorf("%w: sandbox.network: deny needs network namespaces, and user namespaces are unavailable here; commands are refused rather than run with the network (set sandbox.network: allow in .orchestration/config.yaml to run them)", ErrUnavailable)
		}
		// Landlock cannot carve a read-only hole in a writable root:
		// such a root is narrowed to its other entries.
		sp.Writable = narrow(sp.Writable, p.ReadOnly)
	}
	status := newStatusPipe(&sp)
	cmd, err := initCmd(ctx, sp)
	if err != nil {
		status.close()
		return nil, err
	}
	status.attach(cmd)
	cmd.Dir = dir
	return cmd, nil
}

// initCmd starts the intentgate binary as the command's init.
func initCmd(ctx context.Context, sp spec) (*exec.Cmd, error) {
	js, err := json.Marshal(sp)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe", initArg, string(js))
	cmd.Args[0] = "intentgate-sandbox"
	// When the parent dies (killed, say, by an agent that gave up on the
	// command), the init gets SIGTERM, which it answers as any stop
	// signal: it kills the command's whole tree, then exits. SIGKILL
	// would leave, without a PID namespace, the command's descendants
	// running.
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if sp.Namespaces {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		if sp.NoNetwork {
			attr.Cloneflags |= syscall.CLONE_NEWNET
		}
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// The init of an ordinary user keeps, across its exec, the
		// capabilities it needs in its namespace to mount; it drops
		// them before the command runs.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN}
	}
	cmd.SysProcAttr = attr
	// The init ends the command's whole tree on SIGTERM; SIGKILL follows
	// if it does not exit.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	return cmd, nil
}

// narrow replaces every writable directory that holds a read-only path by
// its entries, recursively, leaving the read-only paths out. New entries
// cannot then be created directly in such a directory.
func narrow(writable, readOnly []string) []string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		holds := false
		for _, ro := range readOnly {
			if within(ro, dir) {
				holds = true
				if ro == dir {
					return
				}
			}
		}
		if !holds {
			out = append(out, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			child := filepath.Join(dir, e.Name())
			if e.Type()&os.ModeSymlink != 0 {
				continue // a link's target is judged by its own path
			}
			walk(child)
		}
	}
	for _, w := range writable {
		walk(w)
	}
	return out
}

func unconfined(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

func shellArgv(command string) []string { return []string{"/bin/sh", "-c", command} }
