// Package provider is the small streaming interface between the agent and a
// model API, and the provider-neutral conversation it speaks.
package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Role of a message in the conversation.
const (
	User      = "user"
	Assistant = "assistant"
)

// Block kinds.
const (
	Text       = "text"
	ToolUse    = "tool_use"
	ToolResult = "tool_result"
)

// Block is one content block. The shape is Anthropic's; the OpenAI provider
// translates it to Chat Completions messages.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// Images go with a tool_result as data URLs
	// (data:image/png;base64,...): a browser screenshot, an MCP tool's
	// image. Each provider sends them the way its API accepts images.
	Images []string `json:"images,omitempty"`
}

// DataURL splits a base64 data URL into its media type and data; ok is
// false for anything else.
func DataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	mediaType, data, found = strings.Cut(rest, ";base64,")
	if !found || mediaType == "" || data == "" || strings.ContainsAny(mediaType, ",;") {
		return "", "", false
	}
	return mediaType, data, true
}

// Message is one turn of the conversation.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Tool is a tool definition for function calling.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments
}

// Request is one model request.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
	// Cache, when set, is the conversation's encoding cache (see Cache).
	Cache *Cache
}

// Usage is what a request cost in tokens. InputTokens excludes cache reads
// and writes, as Anthropic reports it; the OpenAI provider subtracts cached
// tokens from prompt tokens to match.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens"`
}

// Chunk is one piece of a streaming reply.
type Chunk struct {
	// Text is assistant text to append.
	Text string
	// ToolIndex, ToolID, ToolName start a tool call (ToolName != "") or
	// append ToolArgs to the call at ToolIndex.
	ToolIndex int
	ToolID    string
	ToolName  string
	ToolArgs  string
}

// Reply is a finished reply.
type Reply struct {
	Content    []Block
	Usage      Usage
	StopReason string
}

// Provider streams one model request. It calls emit for every chunk as it
// arrives and returns the whole reply at the end. It does not retry: the
// task decides about retries, so that the person sees them.
type Provider interface {
	Stream(ctx context.Context, req *Request, emit func(Chunk)) (*Reply, error)
	// Protocol is "anthropic" or "openai" (ClineMessage.apiProtocol).
	Protocol() string
}

// StatusError is an HTTP error from the model API.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("model API answered HTTP %d: %s", e.Status, e.Message)
}

// Retryable reports whether the request may succeed when sent again.
func (e *StatusError) Retryable() bool {
	return e.Status == 429 || e.Status == 408 || e.Status == 409 || e.Status >= 500
}

// Cache keeps a provider's encoding of one conversation between its
// requests, so that a request encodes only the messages that are new. The
// messages of a conversation must not change once sent: the task only
// appends to its history, or replaces it with a new slice (condensing). A
// provider keeps its own state in the cache; one that has none ignores it.
type Cache struct {
	mu    sync.Mutex
	state any
}

// Swap gives f the provider's state (nil at first) and keeps what f
// returns.
func (c *Cache) Swap(f func(state any) any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = f(c.state)
}
