package daemon

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
	"github.com/intentgate/intentgate/internal/peer"
	"github.com/intentgate/intentgate/orchestration"
)

// Package daemon is `intentgate serve`: the governed runtime of one
// workspace kept open, answering external agents' hook events over HTTP and
// a Unix socket through the same adapter.Handler the hook command uses.
//
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

// Options say what to serve.
type Options struct {
	Workspace string
	Addr      string // "" is the address install --daemon wrote, else 127.0.0.1:0
	Socket    string // "" is .orchestration/intentgate.sock; "none" serves no socket
	Verbose   bool
	Version   string // intentgate's version, for the ledger records
	// Also starts another service on the served runtime (the IPC server of
	// intentgate's agent); its stop runs when the daemon ends.
	Also func(rt *gate.Runtime, log *slog.Logger) (stop func(), err error)
}

// Daemon is one served workspace.
type Daemon struct {
	dir     string // absolute, as given
	rt      *gate.Runtime
	log     *slog.Logger
	version string
}

// New returns the daemon of the workspace at dir that rt governs; it logs on log.
func New(dir string, rt *gate.Runtime, log *slog.Logger, version string) *Daemon {
	return &Daemon{dir: dir, rt: rt, log: log, version: version}
}

// Run serves the workspace until ctx is done or SIGINT or SIGTERM arrives:
// HTTP hooks on loopback TCP, and the socket `intentgate hook` uses. Once
// listening it prints one JSON line on out: {"url":...,"socket":...}.
func Run(ctx context.Context, o Options, out, errw io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := filepath.Abs(o.Workspace)
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
	addr := o.Addr
	if addr == "" {
		addr = AddrFromSettings(dir)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := CheckLoopback(addr); err != nil {
		return err
	}
	rt, err := gate.Open(dir, gate.Options{Version: o.Version})
	if err != nil {
		return err
	}
	defer rt.Close()
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelInfo
	}
	d := &Daemon{dir: dir, rt: rt, version: o.Version, log: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level}))}

	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	servers := []*http.Server{d.server(d.TCPHandler())}
	listeners := []net.Listener{tcp}

	sock := o.Socket
	switch {
	case sock == "" && !CanVerifyPeer:
		sock = "none" // no hook here would use it
	case sock == "":
		sock = filepath.Join(dir, orchestration.DirName, SocketName)
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

	if o.Also != nil {
		stopAlso, err := o.Also(rt, d.log)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return err
		}
		defer stopAlso()
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

func (d *Daemon) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
		ConnContext:       peerContext,
	}
}

type otherUserKey struct{}

// refusedPeerKey carries why a connection's peer is not answered.
type refusedPeerKey struct{}

// peerContext notes a connection the daemon must not answer, where the kernel
// tells: a TCP connection from another user of this machine (loopback is
// open to every local user, and their events would be recorded in this
// workspace's ledger), and any connection from a confined command (a process
// in another PID namespace: every command intentgate runs for an agent is
// one), which would otherwise post forged hook events in the agent's name.
func peerContext(ctx context.Context, c net.Conn) context.Context {
	if _, ok := c.(*net.UnixConn); ok {
		if _, err := peer.Of(c); err != nil && !errors.Is(err, peer.ErrUnsupported) {
			return context.WithValue(ctx, refusedPeerKey{}, err.Error())
		}
		return ctx
	}
	client, ok1 := c.RemoteAddr().(*net.TCPAddr)
	server, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return ctx
	}
	uid, ino, ok := peer.TCP(client, server)
	if !ok {
		if peer.CanTellTCP {
			// The kernel keeps every local connection in its table: one
			// missing from it cannot be told apart from a forged one.
			return context.WithValue(ctx, refusedPeerKey{}, "the kernel does not say who connected")
		}
		return ctx
	}
	if uid != os.Geteuid() {
		return context.WithValue(ctx, otherUserKey{}, uid)
	}
	if err := peer.CheckSocketHolders(ino); err != nil {
		return context.WithValue(ctx, refusedPeerKey{}, err.Error())
	}
	// A client that sends and closes at once may have let go of its
	// socket while the holders were searched, and then none was found: the
	// socket must still be held, the same one, after the search. (A holder
	// that still held it then was seen by the search.)
	if _, again, ok := peer.TCP(client, server); !ok || again != ino {
		return context.WithValue(ctx, refusedPeerKey{}, "the connecting process let go of its socket while it was checked")
	}
	return ctx
}

// refusePeers answers 403 to the connections peerContext marked.
func refusePeers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why, ok := r.Context().Value(refusedPeerKey{}).(string); ok {
			http.Error(w, "intentgate serve: refused: "+why, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CheckLoopback refuses any address but a loopback one: the daemon answers
// whoever asks, so only this machine may ask.
func CheckLoopback(addr string) error {
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

// TCPHandler serves the agents' own HTTP hooks.
func (d *Daemon) TCPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/{agent}", d.hookHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return refusePeers(loopbackOnly(mux))
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
func (d *Daemon) socketHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/hook/{agent}", d.hookSocket)
	mux.HandleFunc("POST /hooks/{agent}", d.hookHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return refusePeers(mux)
}

// hookHTTP answers an agent's HTTP hook: the body is the event as the agent
// would give a command hook on stdin, the answer is what the command would
// print. Every event gets 200, refusals too: agents take any other status as
// a failure of the hook and go on as if it had allowed the call.
func (d *Daemon) hookHTTP(w http.ResponseWriter, r *http.Request) {
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
func (d *Daemon) handler(dir string, stderr io.Writer) *adapter.Handler {
	return &adapter.Handler{Workspace: dir, Version: d.version, Stderr: stderr,
		Open: func(root string) (*gate.Runtime, func(), error) {
			if !sameDir(root, d.rt.Root()) {
				return nil, nil, fmt.Errorf("this daemon serves %s, not %s", d.dir, root)
			}
			return d.rt, func() {}, nil
		}}
}

// hookSocket answers `intentgate hook`, which has read and parsed the event
// and found its workspace: the event is handled as that process would have.
func (d *Daemon) hookSocket(w http.ResponseWriter, r *http.Request) {
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

func (d *Daemon) logEvent(agent, via string, stderr *bytes.Buffer) {
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

// AddrFromSettings finds the address of the http hooks that
// `install claude-code --daemon` wrote in the workspace's settings.
func AddrFromSettings(dir string) string {
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
				if h.Type == "http" && IsHookURL(h.URL) {
					u, _ := url.Parse(h.URL)
					return u.Host
				}
			}
		}
	}
	return ""
}

// IsHookURL recognizes the hook URLs install --daemon writes.
func IsHookURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" {
		return false
	}
	agent, ok := strings.CutPrefix(u.Path, "/hooks/")
	if _, known := adapter.Lookup(agent); !ok || !known {
		return false
	}
	return CheckLoopback(u.Host) == nil
}
