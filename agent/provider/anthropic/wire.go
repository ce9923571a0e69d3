package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/intentgate/intentgate/agent/provider"
)

// The request body is encoded here rather than by the SDK: the SDK encodes
// the whole history by reflection on every request, which made the loop cost
// milliseconds per tool call once the history grew. A conversation's
// messages never change once sent, so each is encoded once and kept in the
// request's provider.Cache; only the newest messages (which carry cache
// breakpoints) and a changed header are encoded again. The result is the
// same JSON the SDK sends for Params (TestEncodeMatchesSDK).

// wireState is what the cache keeps for one conversation.
type wireState struct {
	// header is everything before the messages, for the key below.
	header        []byte
	model, system string
	maxTokens     int
	tools         *provider.Tool
	ntools        int
	msgs          []wireMsg
	last          int   // the size of the last body
	buf           *body // the last body
}

// wireMsg is one encoded message without cache breakpoints, valid while the
// message's content is the same slice (same first block, same length).
type wireMsg struct {
	first *provider.Block
	n     int
	role  string
	plain []byte
}

func (m *wireMsg) matches(x *provider.Message) bool {
	return len(x.Content) > 0 && m.first == &x.Content[0] && m.n == len(x.Content) && m.role == x.Role
}

// encode returns the request body of a streaming request.
func encode(req *provider.Request) (*body, error) {
	var st *wireState
	if req.Cache != nil {
		req.Cache.Swap(func(s any) any {
			st, _ = s.(*wireState)
			if st == nil {
				st = &wireState{}
			}
			return st
		})
	} else {
		st = &wireState{}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	var tools *provider.Tool
	if len(req.Tools) > 0 {
		tools = &req.Tools[0]
	}
	if st.header == nil || st.model != req.Model || st.maxTokens != maxTokens || st.system != req.System || st.tools != tools || st.ntools != len(req.Tools) {
		h, err := encodeHeader(req, maxTokens)
		if err != nil {
			return nil, err
		}
		st.header, st.model, st.maxTokens, st.system, st.tools, st.ntools = h, req.Model, maxTokens, req.System, tools, len(req.Tools)
	}
	// Which messages carry a cache breakpoint: the last cachedUserTurns
	// user messages.
	breakAt := map[int]bool{}
	for i, seen := len(req.Messages)-1, 0; i >= 0 && seen < cachedUserTurns; i-- {
		if req.Messages[i].Role == provider.User {
			breakAt[i] = true
			seen++
		}
	}
	// The body is about the size of the last one plus what is new; the last
	// one's buffer is reused once the HTTP client has closed it.
	var b []byte
	if st.buf != nil && st.buf.open.Load() == 0 && cap(st.buf.b) >= st.last+4096 {
		b = st.buf.b[:0]
	} else {
		b = make([]byte, 0, st.last+st.last/8+4096)
	}
	b = append(b, st.header...)
	b = append(b, `"messages":[`...)
	for i := range req.Messages {
		m := &req.Messages[i]
		if i > 0 {
			b = append(b, ',')
		}
		// A breakpoint applies to a message's last block; a message without
		// blocks has nowhere to put it (as with the SDK's Params).
		if breakAt[i] && len(m.Content) > 0 {
			b = appendMessage(b, m, true)
			continue
		}
		if i < len(st.msgs) && st.msgs[i].matches(m) {
			b = append(b, st.msgs[i].plain...)
			continue
		}
		start := len(b)
		b = appendMessage(b, m, false)
		if len(m.Content) == 0 {
			continue
		}
		w := wireMsg{first: &m.Content[0], n: len(m.Content), role: m.Role, plain: bytes.Clone(b[start:])}
		switch {
		case i < len(st.msgs):
			st.msgs[i] = w
			st.msgs = st.msgs[:i+1]
		case i == len(st.msgs):
			st.msgs = append(st.msgs, w)
		}
	}
	if len(st.msgs) > len(req.Messages) {
		st.msgs = st.msgs[:len(req.Messages)]
	}
	b = append(b, "]}"...)
	st.last = len(b)
	st.buf = &body{b: b}
	return st.buf, nil
}

// body is a request body whose buffer the next request reuses once the
// HTTP client closed every reader of it (the client may still be writing it
// after the response came).
type body struct {
	b    []byte
	open atomic.Int32
}

// reader returns a reader of the body; the buffer is free when every
// reader is closed.
func (b *body) reader() io.ReadCloser {
	b.open.Add(1)
	return &bodyReader{Reader: bytes.NewReader(b.b), b: b}
}

type bodyReader struct {
	*bytes.Reader
	b      *body
	closed atomic.Bool
}

func (r *bodyReader) Close() error {
	if !r.closed.Swap(true) {
		r.b.open.Add(-1)
	}
	return nil
}

// encodeHeader encodes stream, model, max_tokens, system (with its cache
// breakpoint), tools and tool_choice, ending with a comma.
func encodeHeader(req *provider.Request, maxTokens int) ([]byte, error) {
	b := []byte(`{"stream":true,`)
	if req.Model != "" {
		b = append(b, `"model":`...)
		b = appendString(b, req.Model)
		b = append(b, ',')
	}
	b = append(b, `"max_tokens":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	b = append(b, `,"system":[{"text":`...)
	b = appendString(b, req.System)
	b = append(b, `,"type":"text","cache_control":{"type":"ephemeral"}}]`...)
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
				return nil, fmt.Errorf("tool %s: schema: %v", t.Name, errOr(err, "not a JSON object"))
			}
			schema["type"] = "object"
			sb, err := json.Marshal(schema)
			if err != nil {
				return nil, fmt.Errorf("tool %s: schema: %w", t.Name, err)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendString(b, t.Name)
			b = append(b, `,"description":`...)
			b = appendString(b, t.Description)
			b = append(b, `,"input_schema":`...)
			b = append(b, sb...)
			b = append(b, '}')
		}
		b = append(b, `],"tool_choice":{"type":"auto"}`...)
	}
	return append(b, ','), nil
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

const ephemeral = `,"cache_control":{"type":"ephemeral"}`

func sent(kind string) bool {
	return kind == provider.Text || kind == provider.ToolUse || kind == provider.ToolResult
}

// appendMessage encodes one message; withBreak puts a cache breakpoint on
// its last block that is sent.
func appendMessage(b []byte, m *provider.Message, withBreak bool) []byte {
	role := "assistant"
	if m.Role == provider.User {
		role = "user"
	}
	b = append(b, `{"role":"`...)
	b = append(b, role...)
	b = append(b, `","content":[`...)
	lastSent := -1
	for i := range m.Content {
		if sent(m.Content[i].Type) {
			lastSent = i
		}
	}
	first := true
	for i := range m.Content {
		blk := &m.Content[i]
		if !sent(blk.Type) {
			continue // other kinds are not sent
		}
		last := withBreak && i == lastSent
		if !first {
			b = append(b, ',')
		}
		first = false
		switch blk.Type {
		case provider.Text:
			b = append(b, `{"type":"text","text":`...)
			b = appendString(b, blk.Text)
			if last {
				b = append(b, ephemeral...)
			}
		case provider.ToolUse:
			b = append(b, `{"type":"tool_use","id":`...)
			b = appendString(b, blk.ID)
			b = append(b, `,"name":`...)
			b = appendString(b, blk.Name)
			b = append(b, `,"input":`...)
			b = appendInput(b, blk.Input)
		case provider.ToolResult:
			b = append(b, `{"type":"tool_result","tool_use_id":`...)
			b = appendString(b, blk.ToolUseID)
			b = append(b, `,"content":[{"type":"text","text":`...)
			b = appendString(b, blk.Content)
			b = append(b, '}')
			for _, u := range blk.Images {
				mt, data, ok := provider.DataURL(u)
				if !ok {
					continue // as toolResult: a data URL that is not base64 is left out
				}
				b = append(b, `,{"type":"image","source":{"type":"base64","media_type":`...)
				b = appendString(b, mt)
				b = append(b, `,"data":`...)
				b = appendString(b, data)
				b = append(b, "}}"...)
			}
			b = append(b, `],"is_error":`...)
			b = strconv.AppendBool(b, blk.IsError)
			if last {
				b = append(b, ephemeral...)
			}
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendInput sends a tool call's arguments as they came when they are a
// JSON object, and {} otherwise (the API takes objects only).
func appendInput(b []byte, in json.RawMessage) []byte {
	t := bytes.TrimSpace(in)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return append(b, "{}"...)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) != nil {
		return append(b, "{}"...)
	}
	return append(b, buf.Bytes()...)
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string, as encoding/json writes it
// (HTML characters escaped, invalid UTF-8 replaced by U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
