package install

import (
	"errors"
	"fmt"
	"net"

	"github.com/intentgate/intentgate/internal/daemon"
)

// DefaultDaemonAddr is where `install claude-code --daemon` points Claude
// Code's http hooks unless told otherwise; `intentgate serve` listens there
// when it finds those hooks in the workspace's settings.
const DefaultDaemonAddr = "127.0.0.1:7853"

// checkDaemon validates --daemon: an http hook is Claude Code's alone, and
// one daemon serves one workspace, so a user-wide install cannot use it.
func (o *Options) checkDaemon(agent string) error {
	if o.Daemon == "" {
		return nil
	}
	if agent != "claude-code" {
		return fmt.Errorf("--daemon: only Claude Code takes http hooks; %s's hook command uses a running `intentgate serve` by itself", agent)
	}
	if o.Global {
		return errors.New("--daemon: a daemon serves one workspace, so it cannot take every project's events; install --daemon in each workspace")
	}
	if err := daemon.CheckLoopback(o.Daemon); err != nil {
		return fmt.Errorf("--daemon: %w", err)
	}
	if _, port, _ := net.SplitHostPort(o.Daemon); port == "0" || port == "" {
		return fmt.Errorf("--daemon %s: name a fixed port; the hooks must know where the daemon is", o.Daemon)
	}
	return nil
}

// daemonNote is all --daemon does: install keeps command hooks, because
// Claude Code takes an http hook it cannot reach as a non-blocking error, so
// a daemon that is down (or killed by the agent) would mean "allow". The
// command hook hands each event to a running daemon through its socket in
// .orchestration/, and handles the event itself when no daemon answers. The
// note gives the exact command that starts the daemon at addr, since nothing
// install writes tells serve the address.
func daemonNote(ws, addr string) string {
	return fmt.Sprintf("start the daemon in this workspace with `intentgate serve -w %s --addr %s`; "+
		"the hooks stay command hooks that hand each event to it through its socket (.orchestration/intentgate.sock) "+
		"and handle the event themselves when it does not answer, so a daemon that is down never lets a call through unchecked; "+
		"its HTTP endpoint at %s is for clients of your own, no hook install writes uses it", shellQuote(ws), addr, addr)
}
