package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Step is one answer of the script: a tool call, or a text when Tool is "".
type Step struct {
	Tool  string         `json:"tool,omitempty"`
	Input map[string]any `json:"input,omitempty"`
	// Raw is the input of a freeform tool (Codex's apply_patch), sent as
	// text rather than JSON arguments.
	Raw  string `json:"raw,omitempty"`
	Text string `json:"text,omitempty"`
}

// AgentServer is a scripted stand-in for the model APIs the external coding
// agents talk to, so that a real agent can be driven end to end on loopback
// without a model: Anthropic Messages (Claude Code), Gemini generateContent and
// streamGenerateContent (Gemini CLI), OpenAI Responses (Codex) and OpenAI
// Chat Completions (Cline). Each request of the agent's main loop (one that
// offers tools) gets the next step of the script, a tool call or a text;
// other requests (titles, summaries, routing) get a short text. Every
// request body is kept, so a test can read what the agent sent back,
// a hook's refusal included.
//
// Its answers are shaped like what each agent's own client expects (one
// block per answer, non-streamed answers where the agent asks for them);
// Server, in fakemodel.go, streams multi-call turns to intentgate's own
// providers.
type AgentServer struct {
	URL string

	mu       sync.Mutex
	steps    []Step
	next     int
	requests []string
	srv      *http.Server
	ln       net.Listener
}

// Start listens on a free loopback port.
func Start(steps []Step) (*AgentServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &AgentServer{steps: steps, ln: ln, URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *AgentServer) Close() error { return s.srv.Close() }

// Requests returns the bodies of the requests received so far, in order.
func (s *AgentServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Served is how many script steps were handed out.
func (s *AgentServer) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *AgentServer) step(body map[string]any) (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !offersTools(body) {
		return Step{Text: "ok"}, false
	}
	if s.next >= len(s.steps) {
		return Step{Text: "All done."}, true
	}
	st := s.steps[s.next]
	s.next++
	return st, true
}

func offersTools(body map[string]any) bool {
	switch t := body["tools"].(type) {
	case []any:
		return len(t) > 0
	}
	return false
}

func (s *AgentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path+"\n"+string(raw))
	s.mu.Unlock()
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	if body == nil {
		body = map[string]any{}
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"fake"}],"models":[]}`)
	case strings.HasSuffix(p, "/messages/count_tokens"):
		io.WriteString(w, `{"input_tokens":10}`)
	case strings.HasSuffix(p, "/messages"):
		st, _ := s.step(body)
		anthropic(w, st, body["stream"] == true)
	case strings.HasSuffix(p, "/chat/completions"):
		st, _ := s.step(body)
		chat(w, st, body["stream"] == true)
	case strings.HasSuffix(p, "/responses"):
		st, _ := s.step(body)
		responses(w, st)
	case strings.Contains(p, ":streamGenerateContent"), strings.Contains(p, ":generateContent"):
		st, _ := s.step(geminiBody(body))
		gemini(w, st, strings.Contains(p, ":streamGenerateContent"))
	case strings.Contains(p, ":countTokens"):
		io.WriteString(w, `{"totalTokens":10}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}
}

// geminiBody presents Gemini's tools as a list of function declarations, so
// that a request offering none is not taken for the main loop.
func geminiBody(body map[string]any) map[string]any {
	var decl []any
	if tools, ok := body["tools"].([]any); ok {
		for _, t := range tools {
			if m, ok := t.(map[string]any); ok {
				if d, ok := m["functionDeclarations"].([]any); ok {
					decl = append(decl, d...)
				}
			}
		}
	}
	return map[string]any{"tools": decl}
}

var ids struct {
	sync.Mutex
	n int
}

func newID(prefix string) string {
	ids.Lock()
	defer ids.Unlock()
	ids.n++
	return fmt.Sprintf("%s_%d", prefix, ids.n)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func input(st Step) map[string]any {
	if st.Input == nil {
		return map[string]any{}
	}
	return st.Input
}

// sse starts a stream of server-sent events.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (e sse) event(name string, v any) { event(e.w, name, v) }

func (e sse) raw(s string) { fmt.Fprintf(e.w, "data: %s\n\n", s); flush(e.w) }

// anthropic answers POST /v1/messages.
func anthropic(w http.ResponseWriter, st Step, stream bool) {
	id := newID("msg")
	var block map[string]any
	stop := "end_turn"
	if st.Tool != "" {
		block = map[string]any{"type": "tool_use", "id": newID("toolu"), "name": st.Tool, "input": input(st)}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": st.Text}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, js(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "fake-model",
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}))
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": "fake-model", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if st.Tool != "" {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": st.Tool, "input": map[string]any{}}
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": js(input(st))}})
	} else {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": st.Text}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// chat answers POST /v1/chat/completions.
func chat(w http.ResponseWriter, st Step, stream bool) {
	id := newID("chatcmpl")
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	finish := "stop"
	var call map[string]any
	if st.Tool != "" {
		finish = "tool_calls"
		call = map[string]any{"id": newID("call"), "type": "function",
			"function": map[string]any{"name": st.Tool, "arguments": js(input(st))}}
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": st.Text}
		if call != nil {
			msg["content"] = nil
			msg["tool_calls"] = []any{call}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, js(map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage}))
		return
	}
	e := newSSE(w)
	chunk := func(delta map[string]any, fin any, u any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
		if u != nil {
			c["usage"] = u
		}
		e.event("", c)
	}
	if call != nil {
		call["index"] = 0
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}, nil, nil)
	} else {
		chunk(map[string]any{"role": "assistant", "content": st.Text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	e.raw("[DONE]")
}

// responses answers POST /v1/responses (always streamed, as Codex asks).
func responses(w http.ResponseWriter, st Step) {
	id := newID("resp")
	var item map[string]any
	switch {
	case st.Tool != "" && st.Raw != "":
		item = map[string]any{"type": "custom_tool_call", "id": newID("ctc"), "status": "completed",
			"call_id": newID("call"), "name": st.Tool, "input": st.Raw}
	case st.Tool != "":
		item = map[string]any{"type": "function_call", "id": newID("fc"), "status": "completed",
			"call_id": newID("call"), "name": st.Tool, "arguments": js(input(st))}
	default:
		item = map[string]any{"type": "message", "id": newID("msg"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	}
	e := newSSE(w)
	resp := map[string]any{"id": id, "object": "response", "status": "in_progress", "model": "fake-model", "output": []any{}}
	e.event("response.created", map[string]any{"type": "response.created", "response": resp})
	e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{"id": id, "object": "response", "status": "completed", "model": "fake-model", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": done})
}

// gemini answers models/*:generateContent and :streamGenerateContent?alt=sse.
func gemini(w http.ResponseWriter, st Step, stream bool) {
	part := map[string]any{"text": st.Text}
	if st.Tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": st.Tool, "args": input(st)}}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "fake-model",
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, js(resp))
		return
	}
	newSSE(w).event("", resp)
}
