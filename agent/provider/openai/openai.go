// Package openai streams agent requests through any OpenAI-compatible Chat
// Completions endpoint (OpenAI, OpenRouter, Ollama, vLLM, LM Studio) with the
// official SDK.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/intentgate/intentgate/agent/provider"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Options configure the provider.
type Options struct {
	APIKey  string
	BaseURL string
	HTTP    *http.Client
}

// Provider is a Chat Completions endpoint.
type Provider struct{ client sdk.Client }

// New returns a provider with the SDK's own retries off (the task retries).
func New(o Options) *Provider {
	opts := []option.RequestOption{option.WithAPIKey(o.APIKey), option.WithMaxRetries(0)}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if o.HTTP != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTP))
	}
	return &Provider{client: sdk.NewClient(opts...)}
}

func (p *Provider) Protocol() string { return "openai" }

// Params translates the Anthropic-shaped conversation: tool_result blocks
// become tool messages, tool_use blocks the assistant's tool_calls.
func Params(req *provider.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	}
	p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	for _, m := range req.Messages {
		if m.Role == provider.Assistant {
			a := sdk.ChatCompletionAssistantMessageParam{}
			text := ""
			for _, b := range m.Content {
				switch b.Type {
				case provider.Text:
					text += b.Text
				case provider.ToolUse:
					args := string(b.Input)
					if args == "" {
						args = "{}"
					}
					a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{ID: b.ID,
							Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args}}})
				}
			}
			if text != "" {
				a.Content.OfString = sdk.String(text)
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		text := ""
		var images []sdk.ChatCompletionContentPartUnionParam
		for _, b := range m.Content {
			switch b.Type {
			case provider.ToolResult:
				p.Messages = append(p.Messages, sdk.ToolMessage(b.Content, b.ToolUseID))
				// A tool message carries text only: its images follow in a
				// user message, as image_url parts.
				for _, u := range b.Images {
					if _, _, ok := provider.DataURL(u); ok {
						images = append(images, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: u}))
					}
				}
			case provider.Text:
				if text != "" {
					text += "\n\n"
				}
				text += b.Text
			}
		}
		switch {
		case len(images) > 0:
			parts := images
			if text != "" {
				parts = append([]sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(text)}, images...)
			}
			p.Messages = append(p.Messages, sdk.UserMessage(parts))
		case text != "":
			p.Messages = append(p.Messages, sdk.UserMessage(text))
		}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return p, fmt.Errorf("tool %s: schema: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: sdk.String(t.Description), Parameters: shared.FunctionParameters(schema),
		}))
	}
	return p, nil
}

// Stream sends req and streams the reply.
func (p *Provider) Stream(ctx context.Context, req *provider.Request, emit func(provider.Chunk)) (*provider.Reply, error) {
	params, err := Params(req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	reply := &provider.Reply{}
	text := ""
	type call struct {
		id, name string
		args     []byte
	}
	calls := map[int64]*call{}
	for stream.Next() {
		ch := stream.Current()
		if ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0 {
			cached := int(ch.Usage.PromptTokensDetails.CachedTokens)
			reply.Usage = provider.Usage{
				InputTokens:     int(ch.Usage.PromptTokens) - cached,
				OutputTokens:    int(ch.Usage.CompletionTokens),
				CacheReadTokens: cached,
			}
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				text += c.Delta.Content
				emit(provider.Chunk{Text: c.Delta.Content})
			}
			for _, tc := range c.Delta.ToolCalls {
				cl := calls[tc.Index]
				if cl == nil {
					cl = &call{}
					calls[tc.Index] = cl
				}
				if tc.ID != "" || tc.Function.Name != "" {
					if tc.ID != "" {
						cl.id = tc.ID
					}
					if tc.Function.Name != "" {
						cl.name = tc.Function.Name
					}
					emit(provider.Chunk{ToolIndex: int(tc.Index), ToolID: cl.id, ToolName: cl.name})
				}
				if tc.Function.Arguments != "" {
					cl.args = append(cl.args, tc.Function.Arguments...)
					emit(provider.Chunk{ToolIndex: int(tc.Index), ToolArgs: tc.Function.Arguments})
				}
			}
			if c.FinishReason != "" {
				reply.StopReason = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) {
			return nil, &provider.StatusError{Status: apiErr.StatusCode, Message: apiErr.Error()}
		}
		return nil, err
	}
	if text != "" {
		reply.Content = append(reply.Content, provider.Block{Type: provider.Text, Text: text})
	}
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		c := calls[i]
		args := c.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		reply.Content = append(reply.Content, provider.Block{Type: provider.ToolUse, ID: c.id, Name: c.name, Input: json.RawMessage(args)})
	}
	return reply, nil
}
