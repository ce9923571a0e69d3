// Package ipc serves intentgate's agent over the wire protocol of Roo Code's
// IPC, so that a client written for Roo Code (with the node-ipc library and
// the ipcMessageSchema of @roo-code/types) starts, watches and answers tasks
// here unchanged.
//
// The framing is node-ipc's default one (no rawBuffer): every frame is the
// UTF-8 JSON text of {"type": EVENT, "data": DATA} followed by a form feed
// (0x0C). JSON escapes every control character inside strings, so a form feed
// never occurs inside a frame. Roo Code sends all its traffic under the
// node-ipc event "message", whose data is one IPC message (see Message).
package ipc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Delimiter ends every frame (node-ipc's default config.delimiter).
const Delimiter = '\f'

// DefaultMaxFrame bounds one frame. Images travel as data URIs inside
// StartNewTask and SendMessage, so the bound is generous; a peer that sends
// more without a delimiter is cut off rather than allowed to fill memory.
const DefaultMaxFrame = 32 << 20

// FrameEvent is the node-ipc event name under which Roo Code sends every
// IPC message.
const FrameEvent = "message"

// Frame is one node-ipc event.
type Frame struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// ErrFrameTooLarge is returned by Decoder.Next for a frame over the limit.
var ErrFrameTooLarge = errors.New("ipc: frame exceeds the size limit")

// FrameError is a complete frame that is not a node-ipc event. The stream
// itself is intact: Next may be called again.
type FrameError struct{ Reason string }

func (e *FrameError) Error() string { return "ipc: bad frame: " + e.Reason }

// Encode returns the bytes of one frame. As node-ipc does, absent data is
// sent as {}.
func Encode(event string, data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	if data == nil || string(raw) == "null" {
		raw = []byte("{}")
	}
	b, err := json.Marshal(Frame{Type: event, Data: raw})
	if err != nil {
		return nil, err
	}
	return append(b, Delimiter), nil
}

// Decoder reads frames from a stream.
type Decoder struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewDecoder reads frames of at most max bytes (DefaultMaxFrame if max <= 0).
func NewDecoder(r io.Reader, max int) *Decoder {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	// The buffer fills, and so the limit is checked, without waiting for
	// a delimiter that may never come.
	size := 64 << 10
	if max+1 < size {
		size = max + 1
	}
	return &Decoder{r: bufio.NewReaderSize(r, size), max: max}
}

// Next returns the next frame. Empty frames (two delimiters in a row) are
// skipped, as node-ipc's parser does not produce them either. A frame that
// is not a JSON object with a string "type" is an error: node-ipc would turn
// it into an "error" event, and a server must not guess what was meant. At
// the end of the stream Next returns io.EOF, or io.ErrUnexpectedEOF when a
// frame was cut off.
func (d *Decoder) Next() (Frame, error) {
	for {
		d.buf = d.buf[:0]
		for {
			chunk, err := d.r.ReadSlice(Delimiter)
			if len(d.buf)+len(chunk) > d.max+1 {
				return Frame{}, ErrFrameTooLarge
			}
			d.buf = append(d.buf, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				if len(bytes.TrimSpace(d.buf)) == 0 {
					return Frame{}, io.EOF
				}
				return Frame{}, io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
		body := d.buf[:len(d.buf)-1]
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		return ParseFrame(body)
	}
}

// ParseFrame decodes the body of one frame (without its delimiter).
func ParseFrame(body []byte) (Frame, error) {
	var f struct {
		Type *string         `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &f); err != nil {
		return Frame{}, &FrameError{Reason: "not a JSON object: " + err.Error()}
	}
	if f.Type == nil {
		return Frame{}, &FrameError{Reason: `no string "type"`}
	}
	return Frame{Type: *f.Type, Data: f.Data}, nil
}
