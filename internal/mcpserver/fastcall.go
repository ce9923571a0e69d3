package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/intentgate/intentgate/hooks"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP SDK spends more CPU on a small tools/call than intentgate's whole
// governed write does outside its system calls: it decodes the message,
// decodes the params, re-encodes the request's _meta and decodes it again
// twice to check it, each decode into a fresh 32 KiB buffer, then encodes
// the result and compacts it into the answer. The stdio connection answers
// the plainest tools/call requests itself instead (see lineConn.fast): a
// line that parseToolCall reads, from a session the SDK has initialized,
// for a tool of this server, whose _meta (if any) is byte for byte one that
// the SDK has already accepted on a tools/call of this connection. Every
// other line, and any doubt, goes to the SDK as before. The answer is the
// one the SDK would give: TestMCPFastCallAnswersAsSDK compares them.

// toolCall is a tools/call request read by parseToolCall: the raw id (as
// plainID spells it), the raw _meta object (nil when there is none), the
// tool's name and the raw arguments object.
type toolCall struct {
	id, meta, args []byte
	name           string
}

// maxNesting is the deepest nesting of objects and arrays the SDK reads in
// a message (its decoder refuses deeper ones).
const maxNesting = 1000

// parseToolCall reads a line that is one JSON-RPC 2.0 tools/call request
// of the plainest form: an object with exactly the members "jsonrpc"
// ("2.0"), "id" (a plain id), "method" ("tools/call") and "params", whose
// members are "name" (a plain string), "arguments" (an object) and
// optionally "_meta" (an object), each once, spelled exactly so, with any
// JSON whitespace between tokens. ok is false for anything else, which the
// SDK then reads; a line parseToolCall accepts is valid JSON that the SDK
// reads as the same request (FuzzParseToolCall).
func parseToolCall(line []byte) (tc toolCall, ok bool) {
	var jsonrpc, method, params []byte
	var seen [4]bool
	end, ok := members(line, 0, func(name string, val []byte) bool {
		var i int
		switch name {
		case "jsonrpc":
			i, jsonrpc = 0, val
		case "id":
			i, tc.id = 1, val
		case "method":
			i, method = 2, val
		case "params":
			i, params = 3, val
		default:
			return false
		}
		if seen[i] {
			return false // duplicates: let the SDK say which wins
		}
		seen[i] = true
		return true
	})
	if !ok || skipSpace(line, end) != len(line) || seen != [4]bool{true, true, true, true} {
		return tc, false
	}
	if string(jsonrpc) != `"2.0"` || string(method) != `"tools/call"` || !plainID(tc.id) || string(tc.id) == `""` {
		return tc, false
	}
	var pseen [3]bool
	var name []byte
	pend, ok := members(params, 0, func(n string, val []byte) bool {
		var i int
		switch n {
		case "name":
			i, name = 0, val
		case "arguments":
			i, tc.args = 1, val
		case "_meta":
			i, tc.meta = 2, val
		default:
			return false
		}
		if pseen[i] {
			return false
		}
		pseen[i] = true
		return true
	})
	if !ok || pend != len(params) || !pseen[0] || !pseen[1] {
		return tc, false
	}
	if len(name) < 3 || name[0] != '"' || bytes.IndexByte(name, '\\') >= 0 || !plainText(name[1:len(name)-1]) {
		return tc, false
	}
	tc.name = string(name[1 : len(name)-1])
	if tc.args[0] != '{' || !json.Valid(tc.args) || nesting(tc.args) > maxNesting-2 {
		return tc, false
	}
	if tc.meta != nil && (tc.meta[0] != '{' || !json.Valid(tc.meta) || nesting(tc.meta) > maxNesting-2) {
		return tc, false
	}
	return tc, true
}

// members reads the JSON object starting at b[i] (after any space) member
// by member, calling f with each plain name (no escape) and the raw value,
// until f returns false. It returns the index just past the object. The
// values are skipped by their brackets and quotes, not checked: the caller
// checks the ones it keeps.
func members(b []byte, i int, f func(name string, val []byte) bool) (int, bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return 0, false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !plainText(key) {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 || !f(string(key), b[i:vend]) {
			return 0, false
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// nesting is the deepest nesting of objects and arrays in the valid JSON
// value b.
func nesting(b []byte) int {
	depth, most := 0, 0
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			e := stringEnd(b, i)
			if e < 0 {
				return maxNesting + 1
			}
			i = e
			continue
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		}
		i++
	}
	return most
}

// fastConn is what a stdio connection keeps for the calls it answers
// itself.
type fastConn struct {
	session atomic.Pointer[mcp.ServerSession] // once the SDK has connected
	wg      sync.WaitGroup                    // calls being answered

	mu sync.Mutex
	// metas are the _meta objects the SDK accepted on a tools/call of
	// this connection (it answered with a result): a request carrying the
	// same bytes would pass its checks again, since they read nothing
	// else but the session's state, which only moves forward. The value
	// says whether the SDK took the request for one of the per-request
	// protocol (2026-07-28 on): then it names the server in the result's
	// _meta.
	metas map[string]bool
	// waiting are the _meta objects of tools/call requests handed to the
	// SDK and not yet answered, by id.
	waiting map[string][]byte
}

// maxMetas bounds the _meta objects kept per connection: a client sends
// the same one on every call.
const maxMetas = 8

// metaKnown reports whether the SDK accepted meta before, and if so
// whether it read it as the per-request protocol's; if not, it notes meta
// as the one of request id, which the SDK will answer.
func (f *fastConn) metaKnown(id, meta []byte) (known, perRequest bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if perRequest, ok := f.metas[string(meta)]; ok {
		return true, perRequest
	}
	if f.waiting == nil {
		f.waiting = map[string][]byte{}
	}
	if len(f.waiting) < maxMetas {
		f.waiting[string(id)] = bytes.Clone(meta)
	}
	return false, false
}

// answered notes the SDK's answer to a request: the _meta of a tools/call
// it answered with a result is accepted from then on.
func (f *fastConn) answered(resp *jsonrpc.Response) {
	key, ok := idKey(resp.ID)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	meta, ok := f.waiting[key]
	if !ok {
		return
	}
	delete(f.waiting, key)
	if resp.Error != nil || len(f.metas) >= maxMetas {
		return
	}
	// The handlers never set a result's _meta: one naming the server is
	// the SDK's, for a request of the per-request protocol.
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(resp.Result, &r) != nil {
		return
	}
	_, perRequest := r.Meta[mcp.MetaKeyServerInfo]
	if f.metas == nil {
		f.metas = map[string]bool{}
	}
	f.metas[string(meta)] = perRequest
}

// idKey spells id as parseToolCall's raw id of the same request: ok is
// false for an id no plain raw id spells.
func idKey(id jsonrpc.ID) (string, bool) {
	switch v := id.Raw().(type) {
	case string:
		s := strconv.Quote(v)
		return s, plainID([]byte(s))
	case int64:
		s := strconv.FormatInt(v, 10)
		return s, plainID([]byte(s))
	}
	return "", false
}

// quickTools are the tools whose calls take the fast path: they end in
// milliseconds. The others (execute_command, browser_action, the MCP hub's,
// searches over a whole tree) go through the SDK, which lets a client's
// notifications/cancelled stop them.
var quickTools = map[string]bool{
	hooks.SelectTool:     true,
	"read_file":          true,
	"write_to_file":      true,
	"apply_diff":         true,
	"insert_content":     true,
	"search_and_replace": true,
}

// protocolMultiRoundTrip is the first protocol version whose tool results
// the SDK marks with a resultType.
const protocolMultiRoundTrip = "2026-07-28"

// fastCall returns the function the stdio connection c offers each
// tools/call parseToolCall read: it takes the call (true) when the session
// is initialized, the tool is one of this server's and the _meta, if any,
// was accepted before; then the answer comes from the handler the SDK
// would have run, on the warm goroutine when it is free.
func (m *toolServer) fastCall(ctx context.Context, c *lineConn) func(toolCall) bool {
	f := &c.fast
	return func(tc toolCall) bool {
		ss := f.session.Load()
		if ss == nil {
			return false
		}
		p := ss.InitializeParams()
		h, ok := m.handlers[tc.name]
		if p == nil || !ok || !quickTools[tc.name] {
			return false
		}
		var perRequest bool
		if tc.meta != nil {
			var known bool
			if known, perRequest = f.metaKnown(tc.id, tc.meta); !known {
				return false
			}
		}
		// As the SDK: a request of the per-request protocol gets a result
		// marked complete and naming the server; so does any request from
		// a client that negotiated a version with multi-round trips.
		resultType := perRequest || p.ProtocolVersion >= protocolMultiRoundTrip
		m.fastCalls.Add(1)
		f.wg.Add(1)
		job := func() {
			defer f.wg.Done()
			res, err := h(ctx, &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: tc.name, Arguments: tc.args}})
			if err == nil && perRequest {
				res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: m.impl}
			}
			data, err := encodeAnswer(tc.id, res, err, resultType)
			if err != nil {
				m.log.Warn("encoding an answer: "+err.Error(), "tool", tc.name)
				c.Close()
				return
			}
			c.writeLine(data)
		}
		select {
		case m.warm <- job:
		default:
			go job()
		}
		return true
	}
}

// encodeAnswer is the answer line to request id, as the SDK writes it:
// the result encoded without HTML escaping, marked complete for clients of
// the multi-round-trip protocol.
func encodeAnswer(id []byte, res *mcp.CallToolResult, herr error, resultType bool) ([]byte, error) {
	if herr != nil {
		var v any
		if err := json.Unmarshal(id, &v); err != nil {
			return nil, err
		}
		rid, err := jsonrpc.MakeID(v)
		if err != nil {
			return nil, err
		}
		data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Error: herr})
		return append(data, '\n'), err
	}
	if res.Content == nil {
		res.Content = []mcp.Content{} // as the SDK does: not null
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	data := bytes.TrimRight(b.Bytes(), "\n")
	if resultType {
		if len(data) == 0 || data[len(data)-1] != '}' {
			return nil, errors.New("a tool result that is not an object")
		}
		data = append(data[:len(data)-1], `,"resultType":"complete"}`...)
	}
	return append(data, "}\n"...), nil
}
