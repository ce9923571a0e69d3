// Package fakemodel is the scripted model server of intentgate's tests, in
// two shapes sharing one event stream writer: Server answers intentgate's own
// providers (Anthropic Messages and OpenAI Chat Completions, streamed, with
// several tool calls per turn, usage, and scripted HTTP errors), and
// AgentServer (Start) stands in for the model APIs of the external coding
// agents (Claude Code, Codex, Gemini CLI, Cline), so that a real agent can be
// driven end to end without a model. Both play a script in order and record
// every request.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Call is a tool call the fake model makes.
type Call struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is sent verbatim as the tool's JSON arguments, so a test can send
	// malformed ones.
	Args string `json:"args"`
}

// Usage is what the fake model reports for a turn.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheWrite int `json:"cache_write"`
	CacheRead  int `json:"cache_read"`
}

// Turn is one scripted reply.
type Turn struct {
	// Status, when not 0 or 200, answers with that HTTP error instead.
	Status int    `json:"status,omitempty"`
	Text   string `json:"text,omitempty"`
	Calls  []Call `json:"calls,omitempty"`
	Usage  Usage  `json:"usage"`
}

// Request is one recorded request.
type Request struct {
	Path   string          `json:"path"`
	APIKey string          `json:"api_key"`
	Body   json.RawMessage `json:"body"`
}

// Server is an http.Handler serving a script.
type Server struct {
	mu     sync.Mutex
	script []Turn
	next   int
	reqs   []Request
}

// New returns a server that plays turns in order.
func New(turns ...Turn) *Server { return &Server{script: turns} }

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	s.script = append(s.script, turns...)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining is the number of turns not yet played.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Sized from Content-Length: a long conversation's body is read in one
	// allocation, not grown by doubling.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), 64<<20)+512))
	_, err := buf.ReadFrom(io.LimitReader(r.Body, 64<<20))
	body := buf.Bytes()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key := r.Header.Get("x-api-key")
	if key == "" {
		key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	anthropic := strings.HasSuffix(r.URL.Path, "/messages")
	openai := strings.HasSuffix(r.URL.Path, "/chat/completions")
	if !anthropic && !openai {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Path: r.URL.Path, APIKey: key, Body: body})
	if s.next >= len(s.script) {
		s.mu.Unlock()
		writeError(w, anthropic, http.StatusBadRequest, "the fake model's script has no more turns")
		return
	}
	t := s.script[s.next]
	s.next++
	s.mu.Unlock()
	if t.Status != 0 && t.Status != http.StatusOK {
		writeError(w, anthropic, t.Status, fmt.Sprintf("scripted HTTP %d", t.Status))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if anthropic {
		writeAnthropic(w, t)
	} else {
		writeOpenAI(w, t)
	}
}

func writeError(w http.ResponseWriter, anthropic bool, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	// A retry-after of zero keeps clients that honour it from waiting.
	w.Header().Set("Retry-After", "0")
	w.WriteHeader(status)
	kind := "api_error"
	if status == http.StatusTooManyRequests {
		kind = "rate_limit_error"
	}
	if anthropic {
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, kind, msg)
	} else {
		fmt.Fprintf(w, `{"error":{"type":%q,"message":%q,"code":null}}`, kind, msg)
	}
}

// pieces splits text into a few chunks so that clients see partial updates.
func pieces(s string) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	n := (len(words) + 2) / 3
	var out []string
	for i := 0; i < len(words); i += n {
		j := min(i+n, len(words))
		out = append(out, strings.Join(words[i:j], ""))
	}
	return out
}

func event(w http.ResponseWriter, name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	flush(w)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

type obj = map[string]any

func writeAnthropic(w http.ResponseWriter, t Turn) {
	event(w, "message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": "fake",
		"stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": t.Usage.Input, "output_tokens": 1,
			"cache_creation_input_tokens": t.Usage.CacheWrite, "cache_read_input_tokens": t.Usage.CacheRead}}})
	idx := 0
	if t.Text != "" {
		event(w, "content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "text", "text": ""}})
		for _, p := range pieces(t.Text) {
			event(w, "content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "text_delta", "text": p}})
		}
		event(w, "content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range t.Calls {
		event(w, "content_block_start", obj{"type": "content_block_start", "index": idx,
			"content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
		for _, p := range splitN(c.Args, 3) {
			event(w, "content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "input_json_delta", "partial_json": p}})
		}
		event(w, "content_block_stop", obj{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	event(w, "message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": t.Usage.Output}})
	event(w, "message_stop", obj{"type": "message_stop"})
}

func splitN(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	var out []string
	for i := 0; i < len(s); i += size {
		out = append(out, s[i:min(i+size, len(s))])
	}
	return out
}

func writeOpenAI(w http.ResponseWriter, t Turn) {
	chunk := func(delta obj, finish any) obj {
		return obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	event(w, "", chunk(obj{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces(t.Text) {
		event(w, "", chunk(obj{"content": p}, nil))
	}
	for i, c := range t.Calls {
		event(w, "", chunk(obj{"tool_calls": []any{obj{"index": i, "id": c.ID, "type": "function",
			"function": obj{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range splitN(c.Args, 3) {
			event(w, "", chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": p}}}}, nil))
		}
	}
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	event(w, "", chunk(obj{}, finish))
	event(w, "", obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
		"choices": []any{}, "usage": obj{
			"prompt_tokens": t.Usage.Input + t.Usage.CacheRead, "completion_tokens": t.Usage.Output,
			"total_tokens":          t.Usage.Input + t.Usage.CacheRead + t.Usage.Output,
			"prompt_tokens_details": obj{"cached_tokens": t.Usage.CacheRead}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
