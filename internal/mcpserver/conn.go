package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is the stdio connection of the server: newline-delimited
// JSON-RPC over the gate, as mcp.IOTransport reads and writes it, with
// each message decoded once. The SDK's own stdio connection decodes every
// incoming message three times before the server sees it (a streaming
// decoder to find the value's end, an attempt to read it as a batch, then
// the message), two of them into a fresh 32 KiB buffer: a third of all the
// bytes the server allocated per write_to_file, and about a tenth of its
// CPU. The gate already cuts the input into lines (the MCP stdio transport
// puts one message on a line, with no newline inside), so a line is one
// message, or one batch.
//
// Everything else is as the SDK's connection does it: a line that is not
// JSON-RPC ends the connection with the error; a batch (JSON-RPC 2.0's
// array of messages) is taken apart and its answers go back together in
// one array, unless the negotiated protocol version is 2025-06-18 or later,
// which removed batches (then the connection ends, as the SDK's does).
//
// A line that is a plain tools/call request (parseToolCall) is first
// offered to take, when it is set: if take answers it, the SDK never sees
// it (see fastcall.go).
type lineTransport struct {
	g     *eofGate
	setup func(*lineConn) // called before the first line is read
}

func (t lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{g: t.g, incoming: make(chan lineMsgs), closed: make(chan struct{})}
	if t.setup != nil {
		t.setup(c)
	}
	go c.readLines()
	return c, nil
}

// errTrailingData is the SDK's error for a line with more than one value.
var errTrailingData = errors.New("invalid trailing data at the end of stream")

// protocolNoBatch is the first protocol version without JSON-RPC batches.
const protocolNoBatch = "2025-06-18"

type lineConn struct {
	g        *eofGate
	incoming chan lineMsgs // from readLines
	closed   chan struct{}
	once     sync.Once
	queue    []jsonrpc.Message // the rest of a batch; Read is called by one goroutine

	take func(toolCall) bool // answers a tools/call itself when it returns true
	fast fastConn

	mu      sync.Mutex
	initID  jsonrpc.ID // of the initialize request, when one was read
	hasInit bool
	version string                      // negotiated, from the initialize answer
	batches map[jsonrpc.ID]*answerBatch // batches with requests not yet answered
	wmu     sync.Mutex                  // one Write at a time
}

// lineMsgs is what one line holds.
type lineMsgs struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

// answerBatch collects the answers to the requests of one batch.
type answerBatch struct {
	waiting map[jsonrpc.ID]int // request id -> its answer's place
	answers []*jsonrpc.Response
}

// readLines decodes the gate's lines and hands them to Read, until the
// input ends, a line fails or the connection closes. It runs on its own
// goroutine so that Close can end a Read waiting for input that does not
// come (as the SDK's connection does).
func (c *lineConn) readLines() {
	for {
		line, err := c.g.readLine()
		var m lineMsgs
		if err != nil {
			m.err = err
		} else {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue // blank lines are whitespace between messages
			}
			if c.take != nil {
				if tc, ok := parseToolCall(line); ok && c.take(tc) {
					continue
				}
			}
			m = decodeLine(line)
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return
		}
		if m.err != nil {
			return
		}
	}
}

// decodeLine reads one line: a message, or a batch of them.
func decodeLine(line []byte) lineMsgs {
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return lineMsgs{err: err}
		}
		// DecodeMessage reads the first value and lets the rest go: two
		// messages on one line are refused, as the SDK's stream does.
		if end := valueEnd(line, 0); end < 0 || skipSpace(line, end) != len(line) {
			return lineMsgs{err: errTrailingData}
		}
		return lineMsgs{msgs: []jsonrpc.Message{msg}}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return lineMsgs{err: fmt.Errorf("unmarshaling jsonrpc batch: %w", err)}
	}
	if len(raws) == 0 {
		return lineMsgs{batch: true, err: errors.New("empty batch")}
	}
	m := lineMsgs{batch: true}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return lineMsgs{batch: true, err: err}
		}
		m.msgs = append(m.msgs, msg)
	}
	return m
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var m lineMsgs
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if m.err != nil {
		return nil, m.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, msg := range m.msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
			c.initID, c.hasInit = req.ID, true
		}
	}
	if m.batch {
		if c.version >= protocolNoBatch {
			return nil, fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", protocolNoBatch, c.version)
		}
		var b *answerBatch
		for _, msg := range m.msgs {
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.ID.IsValid() {
				continue // a notification or an answer: nothing comes back
			}
			if b == nil {
				b = &answerBatch{waiting: map[jsonrpc.ID]int{}}
			}
			if _, dup := b.waiting[req.ID]; dup {
				return nil, fmt.Errorf("duplicate message ID %q", req.ID)
			}
			b.waiting[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
		}
		if b != nil {
			for id := range b.waiting {
				if _, ok := c.batches[id]; ok {
					return nil, fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
				}
			}
			if c.batches == nil {
				c.batches = map[jsonrpc.ID]*answerBatch{}
			}
			for id := range b.waiting {
				c.batches[id] = b
			}
		}
	}
	c.queue = m.msgs[1:]
	return m.msgs[0], nil
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.fast.answered(resp)
		answers, inBatch := c.answered(resp)
		if inBatch {
			if answers == nil {
				return nil // the batch is not complete
			}
			raws := make([]json.RawMessage, 0, len(answers))
			for _, a := range answers {
				raw, err := jsonrpc.EncodeMessage(a)
				if err != nil {
					return fmt.Errorf("encoding batch message: %w", err)
				}
				raws = append(raws, raw)
			}
			data, err := json.Marshal(raws)
			if err != nil {
				return err
			}
			_, err = c.g.Write(append(data, '\n'))
			return err
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	_, err = c.g.Write(append(data, '\n'))
	return err
}

// answered notes an answer: the protocol version the initialize answer
// gives, and the answer's place in its batch, if it belongs to one. It
// returns the batch's answers once all are there.
func (c *lineConn) answered(resp *jsonrpc.Response) (answers []*jsonrpc.Response, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hasInit && resp.ID == c.initID && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.version = r.ProtocolVersion
		}
		c.hasInit = false
	}
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	i, ok := b.waiting[resp.ID]
	if !ok {
		return nil, false
	}
	b.answers[i] = resp
	delete(b.waiting, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.waiting) > 0 {
		return nil, true
	}
	return b.answers, true
}

// writeLine writes an answer the connection made itself.
func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.g.Write(data)
	return err
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		c.g.Close()
		close(c.closed)
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
