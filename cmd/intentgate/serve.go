package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

// The daemon keeps one workspace open (its intents loaded and watched, the
// ledger and the git repository open) and answers hook events over HTTP: on
// loopback TCP for agents that post their events (Claude Code's "http"
// hooks), and on a Unix socket that `intentgate hook` uses when it finds one,
// so that each event costs a request instead of opening the workspace.
//
// It holds no state of its own between events: sessions, pre-images and
// snapshots live in .orchestration/ exactly as when each event is its own
// process, so the answers are the same either way, and a hook process and
// the daemon can take turns within one session.

// daemonSocketName is the daemon's socket in .orchestration/.
const daemonSocketName = "intentgate.sock"

// daemonDirHeader carries the workspace the hook process found, as it found
// it, to the daemon.
const daemonDirHeader = "X-Intentgate-Dir"

type serveOptions struct {
	workspace string
	addr      string // "" is the address install --daemon wrote, else 127.0.0.1:0
	socket    string // "" is .orchestration/intentgate.sock; "none" serves no socket
	ipc       string // "" serves no IPC socket
	verbose   bool
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep the engine warm and answer hook events over HTTP and a Unix socket",
		Long: `serve keeps the workspace open and answers hook events without a process per
event:

  POST http://ADDR/hooks/AGENT   the event as the body, the answer as the body
                                 (Claude Code's "http" hooks; install claude-code
                                 --daemon writes them)
  unix socket .orchestration/intentgate.sock
                                 used by "intentgate hook AGENT" whenever it
                                 finds the daemon running there; without it, the
                                 hook does the work itself, with the same result

It listens on loopback only. --addr defaults to the address in the workspace's
.claude/settings.json written by "intentgate install claude-code --daemon",
else to 127.0.0.1 on a free port. Once listening it prints one JSON line on
stdout: {"url":"http://127.0.0.1:PORT/hooks/claude-code","socket":"..."}.
SIGINT or SIGTERM stops it after the events in progress are answered.

Claude Code treats an http hook that cannot be reached as a non-blocking
error: while the daemon is down, tool calls of an http-hooked session are not
checked. Command hooks ("intentgate install claude-code") never go unchecked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runServe(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "the workspace directory")
	cmd.Flags().StringVar(&o.addr, "addr", "", "loopback address for HTTP hooks (default: the one install --daemon wrote, else 127.0.0.1:0)")
	cmd.Flags().StringVar(&o.socket, "socket", "", `the Unix socket (default .orchestration/intentgate.sock; "none" for none)`)
	cmd.Flags().StringVar(&o.ipc, "ipc", "", "also serve Roo Code's IPC protocol (start, watch and answer agent tasks) on this Unix socket")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "log every event on stderr")
	return cmd
}

// daemon is one served workspace.
type daemon struct {
	dir string // absolute, as given
	rt  *gate.Runtime
	log *slog.Logger
}

func runServe(ctx context.Context, o *serveOptions, out, errw io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := filepath.Abs(o.workspace)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, orchestration.DirName)); err != nil {
		return fmt.Errorf("%s is not governed (no .orchestration/): run `intentgate init` there first", dir)
	}
	// The socket goes in .orchestration/: never through a link put there.
	if err := orchestration.CheckIntact(filepath.Join(dir, orchestration.DirName)); err != nil {
		return err
	}
	addr := o.addr
	if addr == "" {
		addr = daemonAddrFromSettings(dir)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return err
	}
	rt, err := gate.Open(dir, gate.Options{Version: version})
	if err != nil {
		return err
	}
	defer rt.Close()
	if st := rt.Stores(); st != nil && st.Intents != nil {
		// A resident daemon examines an edit of the intents when it is
		// saved; one-shot and per-call front doors check before each use.
		st.Intents.Watch()
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	d := &daemon{dir: dir, rt: rt, log: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level}))}

	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	servers := []*http.Server{d.server(d.tcpHandler())}
	listeners := []net.Listener{tcp}

	sock := o.socket
	switch {
	case sock == "" && !canVerifyPeer:
		sock = "none" // no hook here would use it
	case sock == "":
		sock = filepath.Join(dir, orchestration.DirName, daemonSocketName)
	}
	if sock != "none" {
		ul, err := listenSocket(sock)
		if err != nil {
			tcp.Close()
			return err
		}
		servers = append(servers, d.server(d.socketHandler()))
		listeners = append(listeners, ul)
	} else {
		sock = ""
	}

	if o.ipc != "" {
		stopIPC, err := serveIPC(o.ipc, rt, d.log)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return err
		}
		defer stopIPC()
	}

	hookURL := "http://" + tcp.Addr().String() + "/hooks/claude-code"
	ready, _ := json.Marshal(map[string]string{"url": hookURL, "socket": sock, "workspace": dir})
	fmt.Fprintf(out, "%s\n", ready)
	fmt.Fprintf(errw, "intentgate serve: %s: hooks at %s", dir, hookURL)
	if sock != "" {
		fmt.Fprintf(errw, " and %s", sock)
	}
	fmt.Fprintln(errw)

	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// Answer what is in progress, refuse the rest; a hook refused here
	// does its work itself.
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range servers {
		s.Shutdown(shutCtx)
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	fmt.Fprintln(errw, "intentgate serve: stopped")
	return nil
}

func (d *daemon) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
		ConnContext:       peerContext,
	}
}

type otherUserKey struct{}

// peerContext notes a TCP connection from another user of this machine,
// where the kernel tells (Linux): loopback is open to every local user, and
// their events would be recorded in this workspace's ledger.
func peerContext(ctx context.Context, c net.Conn) context.Context {
	client, ok1 := c.RemoteAddr().(*net.TCPAddr)
	server, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return ctx
	}
	if uid, ok := tcpPeerUID(client, server); ok && uid != os.Geteuid() {
		return context.WithValue(ctx, otherUserKey{}, uid)
	}
	return ctx
}

// checkLoopback refuses any address but a loopback one: the daemon answers
// whoever asks, so only this machine may ask.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q: refusing to listen beyond this machine; use a loopback address such as 127.0.0.1:0", addr)
}

// listenSocket listens on the Unix socket at path, replacing a socket left by
// a daemon that is gone, but never one that answers, nor anything that is
// not a socket.
func listenSocket(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket && !isWindows {
			return nil, fmt.Errorf("%s exists and is not a socket: remove it, or choose another --socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("a daemon already listens on %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (a path over about 100 bytes is too long for a socket: choose a shorter --socket)", path, err)
	}
	// Only this user's processes may ask.
	if err := os.Chmod(path, 0o600); err != nil && !isWindows {
		l.Close()
		return nil, err
	}
	return l, nil
}

// tcpHandler serves the agents' own HTTP hooks.
func (d *daemon) tcpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/{agent}", d.hookHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return loopbackOnly(mux)
}

// loopbackOnly refuses other users of the machine, where the kernel tells,
// and what a web page could send: a browser sets Origin on every cross-site
// POST, and a page reaching 127.0.0.1 through a name of its own (DNS
// rebinding) sends that name as Host.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if uid, ok := r.Context().Value(otherUserKey{}).(int); ok {
			http.Error(w, fmt.Sprintf("intentgate serve answers its own user's agents only, not uid %d", uid), http.StatusForbidden)
			return
		}
		if r.Header.Get("Origin") != "" || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			http.Error(w, "intentgate serve answers local agents only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// socketHandler serves `intentgate hook`.
func (d *daemon) socketHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/hook/{agent}", d.hookSocket)
	mux.HandleFunc("POST /hooks/{agent}", d.hookHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// hookHTTP answers an agent's HTTP hook: the body is the event as the agent
// would give a command hook on stdin, the answer is what the command would
// print. Every event gets 200, refusals too: agents take any other status as
// a failure of the hook and go on as if it had allowed the call.
func (d *daemon) hookHTTP(w http.ResponseWriter, r *http.Request) {
	dialect, ok := adapter.Lookup(r.PathValue("agent"))
	if !ok {
		http.Error(w, fmt.Sprintf("unknown agent %q; use one of: %s", r.PathValue("agent"), strings.Join(adapter.Names(), ", ")), http.StatusNotFound)
		return
	}
	// The work finishes even if the agent stops waiting: half an event
	// (a change made but not recorded) helps no one.
	ctx := context.WithoutCancel(r.Context())
	raw, err := io.ReadAll(io.LimitReader(r.Body, adapter.MaxEventBytes+1))
	if err != nil {
		raw = nil // refused as unreadable
	}
	var stderr bytes.Buffer
	out, _ := d.handler(d.dir, &stderr).Handle(ctx, dialect.Name(), raw)
	d.logEvent(dialect.Name(), "http", &stderr)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// handler answers events with the daemon's own runtime, kept open. dir is
// the workspace as the event's sender spells it.
func (d *daemon) handler(dir string, stderr io.Writer) *adapter.Handler {
	return &adapter.Handler{Workspace: dir, Version: version, Stderr: stderr,
		Open: func(root string) (*gate.Runtime, func(), error) {
			if !sameDir(root, d.rt.Root()) {
				return nil, nil, fmt.Errorf("this daemon serves %s, not %s", d.dir, root)
			}
			return d.rt, func() {}, nil
		}}
}

// daemonReply is the socket protocol's answer: the reply in neutral form, for
// the hook process to render, and what would have gone to its stderr.
type daemonReply struct {
	Reply  adapter.Reply `json:"reply"`
	Stderr string        `json:"stderr,omitempty"`
}

// hookSocket answers `intentgate hook`, which has read and parsed the event
// and found its workspace: the event is handled as that process would have.
func (d *daemon) hookSocket(w http.ResponseWriter, r *http.Request) {
	dialect, ok := adapter.Lookup(r.PathValue("agent"))
	if !ok {
		http.Error(w, "unknown agent", http.StatusNotFound)
		return
	}
	dir := r.Header.Get(daemonDirHeader)
	if !filepath.IsAbs(dir) || !sameDir(dir, d.dir) {
		// Another workspace's event: the hook process handles it itself.
		http.Error(w, fmt.Sprintf("this daemon serves %s, not %s", d.dir, dir), http.StatusMisdirectedRequest)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, adapter.MaxEventBytes+1))
	if err != nil || len(raw) > adapter.MaxEventBytes {
		http.Error(w, "cannot read the event", http.StatusBadRequest)
		return
	}
	if _, err := dialect.Parse(raw); err != nil {
		http.Error(w, "cannot read the event: "+err.Error(), http.StatusBadRequest)
		return
	}
	var stderr bytes.Buffer
	reply := d.handler(dir, &stderr).Reply(context.WithoutCancel(r.Context()), dialect, raw)
	d.logEvent(dialect.Name(), "socket", &stderr)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(daemonReply{Reply: reply, Stderr: stderr.String()})
}

func (d *daemon) logEvent(agent, via string, stderr *bytes.Buffer) {
	d.log.Info("event", "agent", agent, "via", via)
	if s := strings.TrimSpace(stderr.String()); s != "" {
		d.log.Warn(s, "agent", agent, "via", via)
	}
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// daemonAddrFromSettings finds the address of the http hooks that
// `install claude-code --daemon` wrote in the workspace's settings.
func daemonAddrFromSettings(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err != nil {
		return ""
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type == "http" && isDaemonHookURL(h.URL) {
					u, _ := url.Parse(h.URL)
					return u.Host
				}
			}
		}
	}
	return ""
}

// isDaemonHookURL recognizes the hook URLs install --daemon writes.
func isDaemonHookURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" {
		return false
	}
	agent, ok := strings.CutPrefix(u.Path, "/hooks/")
	if _, known := adapter.Lookup(agent); !ok || !known {
		return false
	}
	return checkLoopback(u.Host) == nil
}
