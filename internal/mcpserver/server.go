// Package mcpserver is intentgate's Model Context Protocol server: the
// governed tools of one workspace, offered with the JSON Schemas intentgate
// gives its own models, every call run through the governed runtime.
// Each connection is one intentgate session.
//
// For profiling, INTENTGATE_CPUPROFILE=FILE in the environment writes a
// CPU profile of ServeStdio (go tool pprof reads it) to FILE, as dispatch
// does; it is not for users and not in --help.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/prompts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options tune a Server.
type Options struct {
	Session string // one session id for every connection, instead of a fresh one each
	Agent   string // agent name for calls, instead of the client's name
	Model   string
	Version string // intentgate's version, told to clients
	// MaxMessage bounds one message on stdio (a line, without its
	// newline), in bytes; 0 means DefaultMaxMessage.
	MaxMessage int
	Log        *slog.Logger
}

// Server is the MCP face of one governed workspace. It may serve many
// connections at once; each is its own intentgate session.
type Server = toolServer

// New returns the server of the workspace rt governs. With a nil rt, every
// call is refused with why (the directory is not governed), and nothing is
// created there.
func New(rt *gate.Runtime, why string, o Options) *Server {
	m := newToolServer(rt, o)
	if rt == nil {
		m.ungoverned = why
		m.log.Warn(why)
	}
	return m
}

// ServeStdio serves one connection on a byte stream (stdin and stdout),
// until the client hangs up or ctx is done. A client may send requests
// without waiting for answers: tool calls are handed on in the order they
// came, each once the one before it is answered.
func (m *toolServer) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if p := os.Getenv("INTENTGATE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	in, restore := pollableInput(in)
	defer restore()
	g := newEOFGate(in, out, m.o.MaxMessage)
	// The gate hands on no line longer than g.max and its newline.
	var conn *lineConn
	t := lineTransport{g: g, setup: func(c *lineConn) {
		conn = c
		c.take = m.fastCall(ctx, c)
	}}
	err := m.serve(ctx, t, func(ss *mcp.ServerSession) { conn.fast.session.Store(ss) }, func() {
		if conn != nil {
			conn.fast.wg.Wait()
		}
	})
	g.mu.Lock()
	tooLarge := g.tooLarge
	g.mu.Unlock()
	if tooLarge != nil {
		return tooLarge
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // a signal, or the client hung up: both end the session
	}
	return err
}

// Serve runs one connection until the client ends it or ctx is done.
func (m *toolServer) Serve(ctx context.Context, t mcp.Transport) error {
	return m.serve(ctx, t, nil, nil)
}

// serve is Serve, calling connected (when not nil) with the session once
// the SDK has made it, and drain (when not nil) once the SDK is done with
// the connection, before the session's held changes are written.
func (m *toolServer) serve(ctx context.Context, t mcp.Transport, connected func(*mcp.ServerSession), drain func()) error {
	m.startWarm()
	defer m.stopWarm()
	ss, err := m.srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	defer func() {
		if drain != nil {
			drain()
		}
		m.forget(ss)
	}()
	if connected != nil {
		connected(ss)
	}
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

type toolServer struct {
	rt   *gate.Runtime // nil where the workspace is not governed
	o    Options
	log  *slog.Logger
	srv  *mcp.Server
	impl *mcp.Implementation // the server, as it names itself
	// handlers are the tools' handlers, as the SDK runs them.
	handlers map[string]mcp.ToolHandler

	ungoverned string // why every call is refused, when g is nil

	// held keeps in memory what calls derive for the sessions this server
	// made itself (read hashes, usage counters): no other process knows
	// those ids, so they need no session file until the connection ends.
	held *hooks.HeldSessions

	// warm hands calls to a goroutine that runs them one after another,
	// while a connection is served (see onWarmStack).
	warm    chan func()
	serving int           // connections being served; under mu
	stop    chan struct{} // ends the goroutine that reads warm

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]string // the ids this server made
	problem  string                        // the last intents problem reported
	calls    atomic.Uint64
	// fastCalls counts the tool calls answered without the SDK.
	fastCalls atomic.Uint64
}

func newToolServer(rt *gate.Runtime, o Options) *toolServer {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := &toolServer{rt: rt, o: o, sessions: map[*mcp.ServerSession]string{}, log: o.Log, warm: make(chan func())}
	if rt != nil && rt.Stores() != nil {
		m.held = hooks.NewHeldSessions(rt.Stores().Sessions)
	}
	m.impl = &mcp.Implementation{Name: "intentgate", Title: "intentgate", Version: o.Version}
	m.srv = mcp.NewServer(m.impl,
		&mcp.ServerOptions{
			Logger: m.log,
			Instructions: "Every tool call here is checked by intentgate against the intents declared for this workspace. " +
				"Call select_active_intent first.\n" + prompts.IntentProtocol(),
			// No logging capability: logs go to stderr, not to the client.
			Capabilities: &mcp.ServerCapabilities{},
		})
	closed := false
	m.handlers = map[string]mcp.ToolHandler{}
	for _, t := range prompts.Tools() {
		m.handlers[t.Name] = m.handler(t.Name)
		m.srv.AddTool(&mcp.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: t.Parameters(),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:  t.Group == "read",
				OpenWorldHint: &closed, // the workspace is the whole world
			},
		}, m.handlers[t.Name])
	}
	return m
}

// The SDK runs every request on a goroutine of its own, which starts with a
// small stack; a governed write needs a deep one, so each call grew its
// stack again, copying it each time (about 2.5% of the server's CPU per
// write_to_file). onWarmStack runs f on one long-lived goroutine instead,
// whose stack stays grown, when that goroutine is free; else (calls of
// several connections at once) on the caller's.
func (m *toolServer) onWarmStack(f func()) {
	var p any
	done := make(chan struct{})
	job := func() {
		defer close(done)
		defer func() { p = recover() }()
		f()
	}
	select {
	case m.warm <- job:
		<-done
		if p != nil {
			panic(p) // on the caller's goroutine, as if f had run there
		}
	default:
		f()
	}
}

// startWarm starts the goroutine of onWarmStack with the first connection
// served; stopWarm ends it with the last.
func (m *toolServer) startWarm() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.serving++
	if m.serving == 1 {
		m.stop = make(chan struct{})
		go func(stop chan struct{}) {
			for {
				select {
				case f := <-m.warm:
					f()
				case <-stop:
					return
				}
			}
		}(m.stop)
	}
}

func (m *toolServer) stopWarm() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.serving--
	if m.serving == 0 {
		close(m.stop)
	}
}

// session is the intentgate session of a connection: the one --session
// names, the transport's own session id if it has one, else an id made
// when the connection makes its first call. own is true for the last: only
// this server knows that id.
func (m *toolServer) session(ss *mcp.ServerSession) (id string, own bool) {
	if m.o.Session != "" {
		return m.o.Session, false
	}
	if id := ss.ID(); id != "" {
		return id, false
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
	return id, true
}

// forget drops what the server keeps about a connection that has ended,
// after writing what its session holds.
func (m *toolServer) forget(ss *mcp.ServerSession) {
	m.mu.Lock()
	id, ok := m.sessions[ss]
	delete(m.sessions, ss)
	m.mu.Unlock()
	if ok && m.held != nil {
		if err := m.held.Flush(id); err != nil {
			m.log.Warn(err.Error(), "session", id)
		}
	}
}

func (m *toolServer) agent(ss *mcp.ServerSession) engine.Agent {
	a := engine.Agent{Name: m.o.Agent, Model: m.o.Model}
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
		session, own := m.session(req.Session)
		if m.rt == nil {
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
		}
		if own && m.held != nil {
			m.held.Hold(c)
		}
		var res *engine.Result
		var err error
		m.onWarmStack(func() { res, err = m.rt.Dispatch(ctx, c) })
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
		var warn []mcp.Content
		if d, ok := engine.AsDenial(err); ok {
			text = string(d.JSON())
			m.log.Info("denied", "session", c.Session, "call", c.ID, "tool", c.Tool, "code", d.Code)
			if d.NotRecorded != nil {
				msg := "the refusal was not recorded: " + d.NotRecorded.Error()
				m.log.Warn(msg, "session", c.Session, "call", c.ID, "tool", c.Tool)
				warn = append(warn, &mcp.TextContent{Text: "warning: " + msg})
			}
		} else {
			m.log.Info("failed", "session", c.Session, "call", c.ID, "tool", c.Tool, "error", text)
		}
		return &mcp.CallToolResult{IsError: true, Content: append([]mcp.Content{&mcp.TextContent{Text: text}}, warn...)}
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
	if m.rt == nil {
		return
	}
	p := m.rt.IntentsProblemSeen()
	m.mu.Lock()
	defer m.mu.Unlock()
	if p == nil {
		m.problem = ""
		return
	}
	if msg := p.Error(); msg != m.problem {
		m.problem = msg
		m.log.Warn("the last edit of active_intents.yaml was rejected; the previous intents stay in force:\n" + msg)
	}
}
