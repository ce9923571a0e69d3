package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Hub.
type Options struct {
	// Workspace is the governed workspace's root: the project settings are
	// read from it, it is the servers' root (MCP roots) and the directory
	// stdio servers start in unless their settings say otherwise.
	Workspace string
	// GlobalConfig is the user's settings file; "" reads none.
	GlobalConfig string
	// Version is intentgate's, sent as the client version.
	Version string
	// ConnectTimeout bounds starting and initializing one server (30 s
	// when 0).
	ConnectTimeout time.Duration
	// Stderr receives the stdio servers' standard error (discarded if nil).
	Stderr io.Writer
}

// Hub holds the connections to the configured servers. Nothing is read or
// started until a server is first needed, so building a Hub costs nothing
// for a process that never calls an MCP tool.
type Hub struct {
	opts Options

	mu      sync.Mutex
	loaded  bool
	cfg     *Config
	cfgErr  error
	servers map[string]*server
	closed  bool
}

type server struct {
	name string
	cfg  ServerConfig

	once      sync.Once
	err       error
	session   *mcp.ClientSession
	tools     []*mcp.Tool
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	instr     string
}

// New returns a hub over the settings in opts; see Options.
func New(opts Options) *Hub {
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	return &Hub{opts: opts, servers: map[string]*server{}}
}

// Config returns the settings, reading them the first time.
func (h *Hub) Config() (*Config, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		h.loaded = true
		h.cfg, h.cfgErr = LoadConfig(h.opts.Workspace, h.opts.GlobalConfig)
	}
	return h.cfg, h.cfgErr
}

// ErrUnknownServer is returned for a server name the settings do not have.
var ErrUnknownServer = errors.New("no such MCP server")

// server returns the named server, connected.
func (h *Hub) server(ctx context.Context, name string) (*server, error) {
	cfg, err := h.Config()
	if err != nil {
		return nil, err
	}
	sc, ok := cfg.Servers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; configured: %s", ErrUnknownServer, name, strings.Join(enabled(cfg), ", "))
	}
	if sc.Disabled {
		return nil, fmt.Errorf("MCP server %q is disabled in %s", name, sc.Source)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errors.New("the MCP hub is closed")
	}
	s, ok := h.servers[name]
	if !ok {
		s = &server{name: name, cfg: sc}
		h.servers[name] = s
	}
	h.mu.Unlock()
	s.once.Do(func() { s.err = h.connect(ctx, s) })
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

func enabled(cfg *Config) []string {
	var out []string
	for _, n := range cfg.Names() {
		if !cfg.Servers[n].Disabled {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return []string{"(none; add servers to " + ProjectConfig + ")"}
	}
	return out
}

func (h *Hub) connect(ctx context.Context, s *server) error {
	// The connection outlives the call that caused it; only its setup is
	// bounded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.opts.ConnectTimeout)
	defer cancel()
	var t mcp.Transport
	cfg := s.cfg
	switch cfg.Type {
	case "stdio":
		args := make([]string, len(cfg.Args))
		for i, a := range cfg.Args {
			args[i] = expandEnv(a)
		}
		cmd := exec.Command(expandEnv(cfg.Command), args...)
		cmd.Dir = h.serverDir(cfg)
		cmd.Env = os.Environ()
		keys := make([]string, 0, len(cfg.Env))
		for k := range cfg.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd.Env = append(cmd.Env, k+"="+expandEnv(cfg.Env[k]))
		}
		cmd.Stderr = h.opts.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	case "streamable-http", "sse":
		u := expandEnv(cfg.URL)
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
			return fmt.Errorf("MCP server %q (%s): url %q is not an http(s) URL", s.name, cfg.Source, u)
		}
		hc := &http.Client{Transport: headerTransport{headers: cfg.Headers}}
		if cfg.Type == "sse" {
			t = &mcp.SSEClientTransport{Endpoint: u, HTTPClient: hc}
		} else {
			t = &mcp.StreamableClientTransport{Endpoint: u, HTTPClient: hc, MaxRetries: 2}
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "intentgate", Version: h.opts.Version}, nil)
	if h.opts.Workspace != "" {
		// Servers that honour roots (the filesystem server does) then
		// confine themselves to the workspace too.
		//lint:ignore SA1019 roots still work in the deprecation window, and the filesystem server confines itself by them
		client.AddRoots(&mcp.Root{URI: fileURI(h.opts.Workspace), Name: "workspace"})
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("MCP server %q (%s): cannot connect: %w", s.name, cfg.Source, err)
	}
	s.session = cs
	if ir := cs.InitializeResult(); ir != nil {
		s.instr = ir.Instructions
		caps := ir.Capabilities
		if caps == nil || caps.Tools != nil {
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					break
				}
				s.tools = append(s.tools, tool)
			}
		}
		if caps == nil || caps.Resources != nil {
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					break
				}
				s.resources = append(s.resources, r)
			}
			for r, err := range cs.ResourceTemplates(ctx, nil) {
				if err != nil {
					break
				}
				s.templates = append(s.templates, r)
			}
		}
	}
	return nil
}

// serverDir is where a stdio server starts, and so the directory against
// which it resolves relative paths.
func (h *Hub) serverDir(cfg ServerConfig) string {
	dir := expandEnv(cfg.Cwd)
	if dir == "" {
		return h.opts.Workspace
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(h.opts.Workspace, dir)
	}
	return dir
}

// Base is the directory a server resolves relative path arguments in: its
// working directory for a stdio server; for a remote server relative paths
// mean nothing on this machine, so they are read against the workspace.
func (h *Hub) Base(name string) string {
	cfg, err := h.Config()
	if err != nil {
		return h.opts.Workspace
	}
	sc, ok := cfg.Servers[name]
	if !ok || sc.Type != "stdio" {
		return h.opts.Workspace
	}
	return h.serverDir(sc)
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

type headerTransport struct{ headers map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, expandEnv(v))
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Tool returns a server's tool by name; ok is false when the server or the
// tool is unknown, unreachable or disabled.
func (h *Hub) Tool(ctx context.Context, serverName, tool string) (*mcp.Tool, bool) {
	s, err := h.server(ctx, serverName)
	if err != nil || s.cfg.toolDisabled(tool) {
		return nil, false
	}
	for _, t := range s.tools {
		if t.Name == tool {
			return t, true
		}
	}
	return nil, false
}

// ReadOnly reports whether the tool is annotated read-only (readOnlyHint).
// Anything unknown is not read-only.
func (h *Hub) ReadOnly(ctx context.Context, serverName, tool string) bool {
	t, ok := h.Tool(ctx, serverName, tool)
	return ok && t.Annotations != nil && t.Annotations.ReadOnlyHint
}

// AlwaysAllowed reports whether the settings approve the tool in advance
// (alwaysAllow).
func (h *Hub) AlwaysAllowed(serverName, tool string) bool {
	cfg, err := h.Config()
	if err != nil {
		return false
	}
	sc, ok := cfg.Servers[serverName]
	return ok && sc.alwaysAllowed(tool)
}

// CallTool calls a server's tool within the server's timeout.
func (h *Hub) CallTool(ctx context.Context, serverName, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	s, err := h.server(ctx, serverName)
	if err != nil {
		return nil, err
	}
	if _, ok := h.Tool(ctx, serverName, tool); !ok {
		return nil, fmt.Errorf("MCP server %q has no tool %q; it has: %s", serverName, tool, strings.Join(s.toolNames(), ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	return s.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// ReadResource reads a server's resource within the server's timeout.
func (h *Hub) ReadResource(ctx context.Context, serverName, uri string) (*mcp.ReadResourceResult, error) {
	s, err := h.server(ctx, serverName)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	return s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}

func (s *server) toolNames() []string {
	var out []string
	for _, t := range s.tools {
		if !s.cfg.toolDisabled(t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// Close ends every connection and stops the stdio servers.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	servers := h.servers
	h.servers = map[string]*server{}
	h.mu.Unlock()
	var errs []error
	for _, s := range servers {
		s.once.Do(func() { s.err = errors.New("closed") })
		if s.session != nil {
			if err := s.session.Close(); err != nil {
				errs = append(errs, fmt.Errorf("MCP server %q: %w", s.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Prompt is the system prompt's section on the MCP servers: each enabled
// server with its tools (and their input schemas) and resources. It
// connects every enabled server; one that fails is listed with its error.
func (h *Hub) Prompt(ctx context.Context) (string, error) {
	cfg, err := h.Config()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("MCP SERVERS\n\n")
	b.WriteString("The Model Context Protocol (MCP) lets you use tools and read resources that these servers provide. " +
		"Call a server's tool with use_mcp_tool (server_name, tool_name, arguments) and read a resource with " +
		"access_mcp_resource (server_name, uri). The same rules hold as for every other tool: a tool that is not " +
		"annotated read-only needs an active intent, and every path you pass must lie inside the workspace and, " +
		"for a tool that changes files, inside the intent's owned_scope.\n")
	names := enabled(cfg)
	if len(cfg.Servers) == 0 || len(names) == 1 && strings.HasPrefix(names[0], "(") {
		b.WriteString("\n(No MCP servers are configured.)\n")
		return b.String(), nil
	}
	for _, name := range names {
		sc := cfg.Servers[name]
		fmt.Fprintf(&b, "\n## %s (`%s`)\n", name, sc.describe())
		s, err := h.server(ctx, name)
		if err != nil {
			fmt.Fprintf(&b, "\nNot connected: %v\n", err)
			continue
		}
		if s.instr != "" {
			fmt.Fprintf(&b, "\n### Instructions\n%s\n", strings.TrimSpace(s.instr))
		}
		if names := s.toolNames(); len(names) > 0 {
			b.WriteString("\n### Available Tools\n")
			for _, t := range s.tools {
				if sc.toolDisabled(t.Name) {
					continue
				}
				ro := ""
				if t.Annotations != nil && t.Annotations.ReadOnlyHint {
					ro = " (read-only)"
				}
				fmt.Fprintf(&b, "- %s%s: %s\n", t.Name, ro, oneLine(t.Description))
				if t.InputSchema != nil {
					if schema, err := json.Marshal(t.InputSchema); err == nil {
						fmt.Fprintf(&b, "    Input Schema: %s\n", schema)
					}
				}
			}
		}
		if len(s.resources) > 0 {
			b.WriteString("\n### Direct Resources\n")
			for _, r := range s.resources {
				fmt.Fprintf(&b, "- %s (%s): %s\n", r.URI, r.Name, oneLine(r.Description))
			}
		}
		if len(s.templates) > 0 {
			b.WriteString("\n### Resource Templates\n")
			for _, r := range s.templates {
				fmt.Fprintf(&b, "- %s (%s): %s\n", r.URITemplate, r.Name, oneLine(r.Description))
			}
		}
	}
	return b.String(), nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}
