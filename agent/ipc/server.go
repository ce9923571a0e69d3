package ipc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/peer"
)

// Controller runs tasks for the server. The agent implements it; tests use a
// fake. emit may be called from any goroutine until the task has ended; the
// server never blocks in it.
type Controller interface {
	// Start begins a task and returns its id. Events of the task, and of
	// its subtasks, go to emit.
	Start(ctx context.Context, req StartRequest, emit func(Event)) (taskID string, err error)
	// Resume continues a stored task.
	Resume(ctx context.Context, taskID string, emit func(Event)) error
	// Cancel stops a running task, leaving it resumable.
	Cancel(taskID string) error
	// Close cancels a task and lets go of it.
	Close(taskID string) error
	// Answer answers the task's pending ask: response is "messageResponse"
	// for SendMessage, with its text and images.
	Answer(taskID, response, text string, images []string) error
}

// StartRequest is a StartNewTask command in the agent's terms.
type StartRequest struct {
	Options Options
	Text    string
	Images  []string
	NewTab  bool
}

// MessageResponse is the ask response a SendMessage gives.
const MessageResponse = "messageResponse"

// DefaultMaxClients is node-ipc's default maxConnections.
const DefaultMaxClients = 100

// sendQueue is how many frames may wait for a slow client before it is
// disconnected: a task never waits for a client.
const sendQueue = 4096

// Server serves IPC clients.
type Server struct {
	ctl        Controller
	log        *slog.Logger
	MaxClients int
	MaxFrame   int

	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	clients  map[string]*client
	lastTask string
	closed   bool
	wg       sync.WaitGroup
}

type client struct {
	id      string
	conn    net.Conn
	out     chan []byte
	gone    chan struct{}
	once    sync.Once
	current string // the task SendMessage answers; guarded by Server.mu
}

// NewServer returns a server that runs tasks with ctl and logs to log (nil:
// discard).
func NewServer(ctl Controller, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{ctl: ctl, log: log, ctx: ctx, cancel: cancel, clients: map[string]*client{}}
}

// Serve accepts clients on l until l is closed or Close is called.
func (s *Server) Serve(l net.Listener) error {
	defer l.Close()
	go func() {
		<-s.ctx.Done()
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if err := checkPeer(c); err != nil {
			s.log.Warn("ipc: connection refused", "reason", err)
			c.Close()
			continue
		}
		// Add under the lock Close takes before it waits: no connection
		// is counted once Close has begun waiting.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

// checkPeer admits only processes of this user. Where the kernel cannot
// say, the socket's 0600 permissions are the check.
func checkPeer(c net.Conn) error {
	cr, err := peer.Of(c)
	if errors.Is(err, peer.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot tell who connected: %w", err)
	}
	if cr.UID != os.Geteuid() {
		return fmt.Errorf("process %d runs as uid %d, not as this user", cr.PID, cr.UID)
	}
	return nil
}

// Clients is the number of connected clients.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Close disconnects every client and stops accepting. Running tasks get a
// cancelled context.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	cs := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range cs {
		c.drop()
	}
	s.wg.Wait()
	return nil
}

func newClientID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) serveConn(conn net.Conn) {
	c := &client{id: newClientID(), conn: conn, out: make(chan []byte, sendQueue), gone: make(chan struct{})}
	max := s.MaxClients
	if max <= 0 {
		max = DefaultMaxClients
	}
	// The Ack is queued before the client joins the broadcasts, so that it
	// is always the first message the client reads.
	ack, _ := json.Marshal(Ack{ClientID: c.id, PID: os.Getpid(), PPID: os.Getppid()})
	c.send(s.log, Message{Type: TypeAck, Origin: OriginServer, Data: ack})
	s.mu.Lock()
	if s.closed || len(s.clients) >= max {
		s.mu.Unlock()
		s.log.Warn("ipc: too many clients, connection refused", "max", max)
		conn.Close()
		return
	}
	s.clients[c.id] = c
	s.mu.Unlock()
	s.log.Info("ipc: client connected", "clientId", c.id)

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()

	dec := NewDecoder(conn, s.MaxFrame)
	for {
		f, err := dec.Next()
		var fe *FrameError
		if errors.As(err, &fe) {
			// node-ipc turns such a frame into an "error" event; the
			// connection goes on.
			s.log.Warn("ipc: frame dropped", "clientId", c.id, "reason", err)
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("ipc: client cut off", "clientId", c.id, "reason", err)
			}
			break
		}
		if f.Type != FrameEvent {
			s.log.Warn("ipc: ignoring node-ipc event", "clientId", c.id, "event", f.Type)
			continue
		}
		s.handle(c, f.Data)
	}
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	c.drop()
	<-writerDone
	s.log.Info("ipc: client disconnected", "clientId", c.id)
}

func (c *client) writeLoop() {
	for {
		select {
		case b := <-c.out:
			c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.conn.Write(b); err != nil {
				c.drop()
				return
			}
		case <-c.gone:
			return
		}
	}
}

func (c *client) drop() {
	c.once.Do(func() {
		close(c.gone)
		c.conn.Close()
	})
}

// send queues m for c; a client whose queue is full is disconnected.
func (c *client) send(log *slog.Logger, m Message) {
	b, err := Encode(FrameEvent, m)
	if err != nil {
		log.Error("ipc: cannot encode a message", "error", err)
		return
	}
	select {
	case <-c.gone:
	case c.out <- b:
	default:
		log.Warn("ipc: client too slow, disconnected", "clientId", c.id)
		c.drop()
	}
}

// emitter returns the function through which a task started by client
// relay reports its events: they go to every client, marked with the
// client that asked for the task, as Roo Code broadcasts them.
func (s *Server) emitter(relay string) func(Event) {
	return func(ev Event) {
		data, err := json.Marshal(ev)
		if err != nil {
			s.log.Error("ipc: cannot encode an event", "event", ev.Name, "error", err)
			return
		}
		m := Message{Type: TypeTaskEvent, Origin: OriginServer, RelayClientID: relay, Data: data}
		s.mu.Lock()
		cs := make([]*client, 0, len(s.clients))
		for _, c := range s.clients {
			cs = append(cs, c)
		}
		s.mu.Unlock()
		for _, c := range cs {
			c.send(s.log, m)
		}
	}
}

// tell sends one client an error about its command, as an error message of
// the task concerned ("" when there is none), since the protocol has no
// error reply.
func (s *Server) tell(c *client, taskID, text string) {
	msg, _ := json.Marshal(map[string]any{"ts": time.Now().UnixMilli(), "type": "say", "say": "error", "text": text})
	data, _ := json.Marshal(MessageEvent(taskID, false, msg))
	c.send(s.log, Message{Type: TypeTaskEvent, Origin: OriginServer, RelayClientID: c.id, Data: data})
}

func (s *Server) handle(c *client, raw json.RawMessage) {
	m, cmd, data, err := DecodeMessage(raw)
	if err != nil {
		s.log.Warn("ipc: invalid message dropped", "clientId", c.id, "reason", err)
		return
	}
	if m.ClientID != c.id {
		s.log.Info("ipc: command names another clientId; the connection's own is used", "clientId", c.id, "claimed", m.ClientID)
	}
	switch cmd.Name {
	case CommandStartNewTask:
		st := data.(*StartNewTask)
		opts, err := OptionsFromConfiguration(st.Configuration)
		if err != nil {
			s.tell(c, "", "StartNewTask refused: "+err.Error())
			return
		}
		id, err := s.ctl.Start(s.ctx, StartRequest{Options: opts, Text: st.Text, Images: st.Images, NewTab: st.NewTab}, s.emitter(c.id))
		if err != nil {
			s.tell(c, id, "StartNewTask failed: "+err.Error())
			return
		}
		s.mu.Lock()
		c.current, s.lastTask = id, id
		s.mu.Unlock()
	case CommandResumeTask:
		id := data.(string)
		if err := s.ctl.Resume(s.ctx, id, s.emitter(c.id)); err != nil {
			s.tell(c, id, "ResumeTask failed: "+err.Error())
			return
		}
		s.mu.Lock()
		c.current, s.lastTask = id, id
		s.mu.Unlock()
	case CommandCancelTask:
		id := data.(string)
		if err := s.ctl.Cancel(id); err != nil {
			s.tell(c, id, "CancelTask failed: "+err.Error())
		}
	case CommandCloseTask:
		id := data.(string)
		if err := s.ctl.Close(id); err != nil {
			s.tell(c, id, "CloseTask failed: "+err.Error())
		}
	case CommandSendMessage:
		sm := data.(*SendMessage)
		s.mu.Lock()
		id := c.current
		if id == "" {
			id = s.lastTask
		}
		s.mu.Unlock()
		if id == "" {
			s.tell(c, "", "SendMessage: there is no task to answer; start one with StartNewTask")
			return
		}
		if err := s.ctl.Answer(id, MessageResponse, sm.Text, sm.Images); err != nil {
			s.tell(c, id, "SendMessage failed: "+err.Error())
		}
	}
}

// Broadcast returns the function through which a task the server did not
// start (the task of `intentgate run`) reports its events to every client.
func (s *Server) Broadcast() func(Event) { return s.emitter("") }

// Adopt makes taskID the task a client's SendMessage answers when the
// client started none.
func (s *Server) Adopt(taskID string) {
	s.mu.Lock()
	s.lastTask = taskID
	s.mu.Unlock()
}
