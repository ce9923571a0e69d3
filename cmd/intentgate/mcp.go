package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/prompts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

type mcpOptions struct {
	workspace string // "" finds it: the nearest directory upwards with .orchestration/
	session   string // one session id for every connection, instead of a fresh one each
	agent     string // agent name for calls, instead of the client's name
	model     string
	verbose   bool
}

func newMCPCmd() *cobra.Command {
	o := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the governed tools over MCP on stdin/stdout",
		Long: `mcp is a Model Context Protocol server on stdin and stdout: it offers the
workspace's governed tools (select_active_intent, read_file, write_to_file,
apply_diff, execute_command, ...) with the JSON Schemas intentgate gives its
own models, and runs every call through the engine, as dispatch does.

Each connection is one intentgate session (a fresh id, unless --session names
one), so the intent a client selects holds for that client only. A refusal is
a tool result with isError set whose text is the denial JSON, e.g.
  {"error":"SCOPE_VIOLATION","tool":"write_to_file","path":"docs/a.md",...}
a tool that failed is a result with isError set and the error's message.
Nothing but MCP messages is written to stdout; logs go to stderr.

Without --workspace, the workspace is the nearest directory with
.orchestration/, looking upwards from the current one. Where there is none,
every call is refused and nothing is created there.

"intentgate install AGENT" registers this server with the agent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runMCP(ctx, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", "", "the workspace directory (default: found from the current directory)")
	cmd.Flags().StringVar(&o.session, "session", "", "the session id of every connection (default: a new one per connection)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "agent name recorded for calls (default: the client's name)")
	cmd.Flags().StringVar(&o.model, "model", "", "model id recorded for calls")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "log every call on stderr")
	return cmd
}

func runMCP(ctx context.Context, o *mcpOptions, in io.Reader, out, errw io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, isGoverned := o.workspace, true
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir, isGoverned = findWorkspace(wd)
	} else if _, err := os.Lstat(filepath.Join(dir, ".orchestration")); err != nil {
		isGoverned = false
	}
	var g *governed
	if isGoverned {
		var err error
		if g, err = open(dir); err != nil {
			return err
		}
		defer g.close()
	}
	m := newToolServer(g, o, errw)
	if g == nil {
		// Opening the engine would create .orchestration/ here.
		m.ungoverned = fmt.Sprintf("%s is not governed: it has no .orchestration/", dir)
		m.log.Warn(m.ungoverned)
	}
	gate := newEOFGate(in, out)
	err := m.serve(ctx, &mcp.IOTransport{Reader: gate, Writer: gate})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // a signal, or the client hung up: both end the session
	}
	return err
}

// serve runs one connection until the client ends it or ctx is done.
func (m *toolServer) serve(ctx context.Context, t mcp.Transport) error {
	ss, err := m.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	defer m.forget(ss)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		ss.Close()
		<-done
		return ctx.Err()
	}
}

// toolServer is the MCP face of one governed workspace. It may serve many
// connections at once; each is its own intentgate session.
type toolServer struct {
	g   *governed // nil where the workspace is not governed
	o   *mcpOptions
	log *slog.Logger
	srv *mcp.Server

	ungoverned string // why every call is refused, when g is nil

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]string
	problem  string // the last intents problem reported
	calls    atomic.Uint64
}

func newToolServer(g *governed, o *mcpOptions, errw io.Writer) *toolServer {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	m := &toolServer{g: g, o: o, sessions: map[*mcp.ServerSession]string{},
		log: slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: level}))}
	m.srv = mcp.NewServer(&mcp.Implementation{Name: "intentgate", Title: "intentgate", Version: version},
		&mcp.ServerOptions{
			Logger: m.log,
			Instructions: "Every tool call here is checked by intentgate against the intents declared for this workspace. " +
				"Call select_active_intent first.\n" + prompts.IntentProtocol(),
			// No logging capability: logs go to stderr, not to the client.
			Capabilities: &mcp.ServerCapabilities{},
		})
	closed := false
	for _, t := range prompts.Tools() {
		m.srv.AddTool(&mcp.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: t.Parameters(),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:  t.Group == "read",
				OpenWorldHint: &closed, // the workspace is the whole world
			},
		}, m.handler(t.Name))
	}
	return m
}

// session is the intentgate session of a connection: the one --session
// names, the transport's own session id if it has one, else an id made
// when the connection makes its first call.
func (m *toolServer) session(ss *mcp.ServerSession) string {
	if m.o.session != "" {
		return m.o.session
	}
	if id := ss.ID(); id != "" {
		return id
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.sessions[ss]
	if !ok {
		var b [8]byte
		rand.Read(b[:])
		id = "mcp-" + hex.EncodeToString(b[:])
		m.sessions[ss] = id
		m.log.Info("new session", "session", id)
	}
	return id
}

// forget drops what the server keeps about a connection that has ended.
func (m *toolServer) forget(ss *mcp.ServerSession) {
	m.mu.Lock()
	delete(m.sessions, ss)
	m.mu.Unlock()
}

func (m *toolServer) agent(ss *mcp.ServerSession) engine.Agent {
	a := engine.Agent{Name: m.o.agent, Model: m.o.model}
	if a.Name == "" {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			a.Name = p.ClientInfo.Name
		}
	}
	if a.Name == "" {
		a.Name = "mcp"
	}
	return a
}

// handler runs calls of one tool through the engine.
func (m *toolServer) handler(tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		session := m.session(req.Session)
		if m.g == nil {
			d := &engine.Denial{Code: engine.HookError, Tool: tool, Message: m.ungoverned + ", so no intent can be selected and nothing is allowed",
				Hint: "tell the user to run `intentgate init` in the workspace, or to start intentgate mcp with --workspace"}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(d.JSON())}}}, nil
		}
		c := &engine.Call{
			ID:      fmt.Sprintf("%s-%d", session, m.calls.Add(1)),
			Session: session,
			Tool:    tool,
			Args:    req.Params.Arguments,
			Agent:   m.agent(req.Session),
			WS:      m.g.ws,
		}
		res, err := m.g.eng.Dispatch(ctx, c)
		m.reportProblem()
		return m.result(c, res, err), nil
	}
}

// result is the engine's answer as an MCP tool result: a refusal or a failed
// tool is a result with isError set, so that the model sees it and can act
// on it; protocol errors are for calls that never reached a tool.
func (m *toolServer) result(c *engine.Call, res *engine.Result, err error) *mcp.CallToolResult {
	var pe *engine.PostError
	switch {
	case err == nil, errors.As(err, &pe):
	default:
		text := err.Error()
		if d, ok := engine.AsDenial(err); ok {
			text = string(d.JSON())
			m.log.Info("denied", "session", c.Session, "call", c.ID, "tool", c.Tool, "code", d.Code)
		} else {
			m.log.Info("failed", "session", c.Session, "call", c.ID, "tool", c.Tool, "error", text)
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	m.log.Info("ok", "session", c.Session, "call", c.ID, "tool", c.Tool, "intent", c.Intent)
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Output}}}
	if len(res.Data) > 0 {
		out.StructuredContent = res.Data
	}
	if pe != nil {
		for _, e := range pe.Errs {
			msg := "the call happened but was not fully recorded: " + e.Error()
			m.log.Warn(msg, "session", c.Session, "call", c.ID, "tool", c.Tool)
			out.Content = append(out.Content, &mcp.TextContent{Text: "warning: " + msg})
		}
	}
	return out
}

// reportProblem logs, once per new problem, that an edit of
// active_intents.yaml was rejected and the last good intents stay in force.
func (m *toolServer) reportProblem() {
	if m.g == nil || m.g.store == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	m.problem = reportProblem(m.g, m.problem, &b)
	if b.Len() > 0 {
		m.log.Warn(strings.TrimSpace(b.String()))
	}
}

// eofGate carries the stdio stream and holds back the end of the input until
// every request read has been answered. The go-sdk stops writing as soon as
// its input ends (modelcontextprotocol/go-sdk#1061), so a client that sends
// its requests and closes stdin, as `intentgate mcp < calls.jsonl` does,
// would otherwise get no answers to the last of them.
type eofGate struct {
	r io.Reader
	w io.Writer

	mu      sync.Mutex
	cond    *sync.Cond
	pending int    // requests read and not yet answered
	partial []byte // the start of a line not yet complete
	eof     bool
	closed  bool
}

// eofGateMax bounds the wait for answers after the input ended: longer than
// any tool takes (execute_command stops a command after two minutes).
const eofGateMax = 5 * time.Minute

func newEOFGate(r io.Reader, w io.Writer) *eofGate {
	g := &eofGate{r: r, w: w}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *eofGate) Read(p []byte) (int, error) {
	g.mu.Lock()
	eof := g.eof
	g.mu.Unlock()
	if eof {
		return 0, g.waitAnswered()
	}
	n, err := g.r.Read(p)
	g.mu.Lock()
	g.partial = append(g.partial, p[:n]...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		g.pending += countRequests(g.partial[:i])
		g.partial = g.partial[i+1:]
	}
	if err == io.EOF {
		g.pending += countRequests(g.partial)
		g.partial, g.eof = nil, true
		if n > 0 {
			err = nil // hand over the data now, the end on the next read
		}
	}
	if len(g.partial) == 0 {
		g.partial = nil // let a large line's buffer go
	}
	g.mu.Unlock()
	if err == io.EOF {
		return n, g.waitAnswered()
	}
	return n, err
}

func (g *eofGate) waitAnswered() error {
	timer := time.AfterFunc(eofGateMax, func() {
		g.mu.Lock()
		g.closed = true
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer timer.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.pending > 0 && !g.closed {
		g.cond.Wait()
	}
	return io.EOF
}

func (g *eofGate) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if answered := countResponses(p); answered > 0 {
		g.mu.Lock()
		g.pending -= answered
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	return n, err
}

// Close ends the wait: the connection is going away.
func (g *eofGate) Close() error {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	return nil
}

// rpcHead is what tells JSON-RPC requests and responses apart.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (h rpcHead) hasID() bool { return len(h.ID) > 0 && string(h.ID) != "null" }

// rpcHeads reads one line of JSON-RPC: a message or a batch of them.
func rpcHeads(line []byte) []rpcHead {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var hs []rpcHead
		if json.Unmarshal(line, &hs) != nil {
			return nil
		}
		return hs
	}
	var h rpcHead
	if json.Unmarshal(line, &h) != nil {
		return nil
	}
	return []rpcHead{h}
}

func countRequests(line []byte) int {
	n := 0
	for _, h := range rpcHeads(line) {
		if h.Method != "" && h.hasID() {
			n++
		}
	}
	return n
}

func countResponses(msg []byte) int {
	n := 0
	for _, line := range bytes.Split(msg, []byte("\n")) {
		for _, h := range rpcHeads(line) {
			if h.Method == "" && h.hasID() {
				n++
			}
		}
	}
	return n
}
