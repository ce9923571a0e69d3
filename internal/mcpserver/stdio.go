package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eofGate carries the stdio stream between the client and the SDK, and does
// two things the SDK does not:
//
//   - It hands on a tools/call request only once every tools/call before it
//     has been answered. The SDK runs requests concurrently, so a client that
//     sends select_active_intent and then a write without waiting would
//     otherwise have the write judged before its intent is selected. Other
//     messages (notifications, pings) still pass while a call runs, as long
//     as no tool call waits before them.
//   - It holds back the end of the input until every request read has been
//     answered. The go-sdk stops writing as soon as its input ends
//     (modelcontextprotocol/go-sdk#1061), so a client that sends its requests
//     and closes stdin, as `intentgate mcp < calls.jsonl` does, would
//     otherwise get no answers to the last of them.
//
// It also bounds a message: a line longer than max bytes ends the
// connection (MessageTooLargeError) once the lines before it are answered,
// so that a client sending without newlines cannot make it buffer without
// end.
type eofGate struct {
	r   io.Reader
	w   io.Writer
	max int // the longest line read, without its newline

	wmu sync.Mutex // one Write to w at a time (the SDK's answers, the gate's error)

	mu       sync.Mutex
	cond     *sync.Cond
	pending  int                 // requests read and not yet answered
	inflight map[string]struct{} // tool calls handed on and not yet answered, by id
	lines    [][]byte            // complete lines read and not yet handed on
	started  bool                // lines[0] was admitted and is being handed on
	partial  []byte              // the start of a line not yet complete
	buf      []byte              // what Read reads the input into
	eof      bool
	closed   bool
	tooLarge *MessageTooLargeError // a line went past max: nothing more is read
}

// DefaultMaxMessage is the largest message (one line of JSON-RPC, without
// its newline) the stdio server reads unless Options.MaxMessage says
// otherwise: the MCP SDK's own default line limit.
const DefaultMaxMessage = mcp.DefaultMaxLineLength

// MessageTooLargeError ends a stdio connection whose client sent a line
// longer than the limit.
type MessageTooLargeError struct {
	Max int // the limit, in bytes
}

func (e *MessageTooLargeError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Max)
	if e.Max >= 1<<20 && e.Max%(1<<20) == 0 {
		size += fmt.Sprintf(" (%d MiB)", e.Max>>20)
	}
	return "a message on stdin is longer than " + size + ", the largest this server reads; " +
		"the connection is closed (start intentgate mcp with --max-message-size BYTES to raise the limit)"
}

// eofGateMax bounds the wait for answers after the input ended: longer than
// any tool takes (execute_command stops a command after two minutes).
const eofGateMax = 5 * time.Minute

func newEOFGate(r io.Reader, w io.Writer, max int) *eofGate {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	g := &eofGate{r: r, w: w, max: max, inflight: map[string]struct{}{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *eofGate) Read(p []byte) (int, error) {
	g.mu.Lock()
	if err := g.fillLocked(); err != nil {
		return 0, err
	}
	line := g.lines[0]
	n := copy(p, line)
	if n == len(line) {
		g.lines, g.started = g.lines[1:], false
	} else {
		g.lines[0] = line[n:]
	}
	g.mu.Unlock()
	return n, nil
}

// readLine returns the next line whole, with its newline (the last line
// of the input may have none): what Read hands on, a line at a time.
func (g *eofGate) readLine() ([]byte, error) {
	g.mu.Lock()
	if err := g.fillLocked(); err != nil {
		return nil, err
	}
	line := g.lines[0]
	g.lines, g.started = g.lines[1:], false
	g.mu.Unlock()
	return line, nil
}

// fillLocked reads until a line is there, and admits it (a tool call
// waits here for the calls before it to be answered). It is called with
// g.mu held, and returns with it held, unless it fails: then g.mu is
// released.
func (g *eofGate) fillLocked() error {
	for len(g.lines) == 0 {
		if g.tooLarge != nil {
			g.mu.Unlock()
			return g.refuseTooLarge()
		}
		if g.eof || g.closed {
			g.mu.Unlock()
			return g.waitAnswered()
		}
		g.mu.Unlock()
		if g.buf == nil {
			g.buf = make([]byte, 64<<10)
		}
		buf := g.buf // Read is called by one goroutine at a time, the SDK's reader
		n, err := g.r.Read(buf)
		g.mu.Lock()
		from := len(g.partial) // what was there before holds no newline
		g.partial = append(g.partial, buf[:n]...)
		for {
			i := bytes.IndexByte(g.partial[from:], '\n')
			if i < 0 {
				break
			}
			i += from
			if i > g.max {
				break // refused below, after the lines before it
			}
			if i+1 == len(g.partial) {
				// The line is all there is (the usual case): hand on
				// these bytes, no copy.
				g.lines = append(g.lines, g.partial)
				g.partial = nil
				break
			}
			g.lines = append(g.lines, bytes.Clone(g.partial[:i+1]))
			g.partial, from = g.partial[i+1:], 0
		}
		if len(g.partial) > g.max {
			// Stop reading: what came after the long line is not looked
			// at, and its bytes are let go.
			g.tooLarge = &MessageTooLargeError{Max: g.max}
			g.partial, g.buf = nil, nil
			continue
		}
		if len(g.partial) == 0 {
			g.partial = nil // let a large line's buffer go
		}
		if err == io.EOF {
			if len(g.partial) > 0 {
				g.lines = append(g.lines, g.partial)
			}
			g.partial, g.eof = nil, true
		} else if err != nil {
			g.mu.Unlock()
			return err
		}
	}
	line := g.lines[0]
	if !g.started {
		heads := rpcHeads(line)
		calls := toolCallIDs(heads)
		if len(calls) > 0 {
			// A call whose answer never shows (a batch the SDK refused
			// as a whole) must not stop the connection for good.
			deadline := time.Now().Add(eofGateMax)
			timer := time.AfterFunc(eofGateMax, func() {
				g.mu.Lock()
				g.cond.Broadcast()
				g.mu.Unlock()
			})
			for len(g.inflight) > 0 && !g.closed && time.Now().Before(deadline) {
				g.cond.Wait()
			}
			timer.Stop()
			clear(g.inflight)
			for _, id := range calls {
				g.inflight[id] = struct{}{}
			}
		}
		g.pending += countRequests(heads)
		g.started = true
	}
	return nil
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

// refuseTooLarge waits for the answers to the requests read before the long
// line, tells the client why the connection ends, and returns the error.
func (g *eofGate) refuseTooLarge() error {
	g.waitAnswered()
	e := g.tooLarge
	msg, _ := json.Marshal(e.Error())
	g.wmu.Lock()
	fmt.Fprintf(g.w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":%s,"data":{"max_message_bytes":%d}}}`+"\n", msg, e.Max)
	g.wmu.Unlock()
	return e
}

func (g *eofGate) Write(p []byte) (int, error) {
	g.wmu.Lock()
	n, err := g.w.Write(p)
	g.wmu.Unlock()
	var answered []string
	for rest := p; len(rest) > 0; {
		// The SDK writes one message and its newline at a time: no
		// slice of lines is made for that.
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		for _, h := range rpcHeads(line) {
			if h.Method == "" && h.hasID() {
				answered = append(answered, normalID(h.ID))
			}
		}
	}
	if len(answered) > 0 {
		g.mu.Lock()
		g.pending -= len(answered)
		for _, id := range answered {
			delete(g.inflight, id)
		}
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	return n, err
}

// Close ends the waits: the connection is going away.
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
	if h, ok := scanHead(line); ok {
		return []rpcHead{h}
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

func countRequests(heads []rpcHead) int {
	n := 0
	for _, h := range heads {
		if h.Method != "" && h.hasID() {
			n++
		}
	}
	return n
}

// toolCallIDs are the ids of the tools/call requests among heads.
func toolCallIDs(heads []rpcHead) []string {
	var ids []string
	for _, h := range heads {
		if h.Method == "tools/call" && h.hasID() {
			ids = append(ids, normalID(h.ID))
		}
	}
	return ids
}

// normalID spells a JSON-RPC id one way, whatever escapes or number form
// the client or the SDK used.
func normalID(raw json.RawMessage) string {
	if plainID(raw) {
		return string(raw)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// plainID reports whether raw is an id that normalID would spell as it is:
// a small whole number, or a string of letters, digits, '-', '_', '.' and ':'.
func plainID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
				return false
			}
		}
		return true
	}
	// Up to 15 digits a float64 holds exactly, so it is printed back the same.
	if len(raw) > 15 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
