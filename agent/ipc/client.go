package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/peer"
)

// Client is a Go client of the IPC protocol, for intentgate's own commands
// and tests; it works with Roo Code's server too.
type Client struct {
	conn net.Conn
	dec  *Decoder
	ack  Ack
	wmu  sync.Mutex
}

// Dial connects to the server at path, checks that it runs as this user, and
// waits for its Ack.
func Dial(ctx context.Context, path string) (*Client, error) {
	conn, err := dial(path, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w (is a server listening there? start one with intentgate serve --ipc %s)", path, err, path)
	}
	if cr, err := peer.Of(conn); err == nil && cr.UID != os.Geteuid() {
		conn.Close()
		return nil, fmt.Errorf("%s is served by uid %d, not by this user: refusing to talk to it", path, cr.UID)
	} else if err != nil && !errors.Is(err, peer.ErrUnsupported) {
		conn.Close()
		return nil, fmt.Errorf("%s: cannot tell who serves it: %w", path, err)
	}
	c := &Client{conn: conn, dec: NewDecoder(conn, 0)}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetReadDeadline(dl)
	} else {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	}
	m, err := c.Next()
	conn.SetReadDeadline(time.Time{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: no Ack from the server: %w", path, err)
	}
	if m.Type != TypeAck || json.Unmarshal(m.Data, &c.ack) != nil || c.ack.ClientID == "" {
		conn.Close()
		return nil, fmt.Errorf("%s: the server's first message is %s, not an Ack", path, m.Type)
	}
	return c, nil
}

// Ack is what the server answered on connect.
func (c *Client) Ack() Ack { return c.ack }

// Close disconnects.
func (c *Client) Close() error { return c.conn.Close() }

// Send sends one task command.
func (c *Client) Send(name CommandName, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	cmd, err := json.Marshal(Command{Name: name, Data: raw})
	if err != nil {
		return err
	}
	b, err := Encode(FrameEvent, Message{Type: TypeTaskCommand, Origin: OriginClient, ClientID: c.ack.ClientID, Data: cmd})
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.conn.Write(b)
	return err
}

// Next returns the next message from the server, skipping node-ipc events
// other than "message".
func (c *Client) Next() (*Message, error) {
	for {
		f, err := c.dec.Next()
		var fe *FrameError
		if errors.As(err, &fe) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.Type != FrameEvent {
			continue
		}
		var m Message
		if err := json.Unmarshal(f.Data, &m); err != nil {
			continue
		}
		return &m, nil
	}
}

// NextEvent returns the next TaskEvent, skipping other messages and events
// that do not decode.
func (c *Client) NextEvent() (*Message, Event, error) {
	for {
		m, err := c.Next()
		if err != nil {
			return nil, Event{}, err
		}
		if m.Type != TypeTaskEvent {
			continue
		}
		var ev Event
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			continue
		}
		return m, ev, nil
	}
}
