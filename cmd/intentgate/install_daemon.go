package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/intentgate/intentgate/internal/daemon"
)

// defaultDaemonAddr is where `install claude-code --daemon` points Claude
// Code's http hooks unless told otherwise; `intentgate serve` listens there
// when it finds those hooks in the workspace's settings.
const defaultDaemonAddr = "127.0.0.1:7853"

// checkDaemon validates --daemon: an http hook is Claude Code's alone, and
// one daemon serves one workspace, so a user-wide install cannot use it.
func (o *installOptions) checkDaemon(agent string) error {
	if o.daemon == "" {
		return nil
	}
	if agent != "claude-code" {
		return fmt.Errorf("--daemon: only Claude Code takes http hooks; %s's hook command uses a running `intentgate serve` by itself", agent)
	}
	if o.global {
		return errors.New("--daemon: a daemon serves one workspace, so it cannot take every project's events; install --daemon in each workspace")
	}
	if err := daemon.CheckLoopback(o.daemon); err != nil {
		return fmt.Errorf("--daemon: %w", err)
	}
	if _, port, _ := net.SplitHostPort(o.daemon); port == "0" || port == "" {
		return fmt.Errorf("--daemon %s: name a fixed port; the hooks must know where the daemon is", o.daemon)
	}
	return nil
}

// daemonSpecs turns the hooks of specs into http hooks to the daemon, but for
// SessionStart, which Claude Code runs only as a command.
func (o *installOptions) daemonSpecs(specs []hookSpec, agent string) []hookSpec {
	url := "http://" + o.daemon + "/hooks/" + agent
	out := make([]hookSpec, len(specs))
	for i, s := range specs {
		if s.event != "SessionStart" {
			s.url = url
		}
		out[i] = s
	}
	return out
}

func daemonNote(addr string) string {
	return fmt.Sprintf("start the daemon in this workspace with `intentgate serve` (it listens on %s, the address in these hooks); "+
		"Claude Code takes an http hook it cannot reach as a non-blocking error, so while the daemon is down tool calls go unchecked: "+
		"install without --daemon where that matters (the hook command uses a running daemon by itself)", addr)
}
