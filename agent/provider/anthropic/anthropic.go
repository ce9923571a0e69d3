// Package anthropic streams agent requests through the Anthropic Messages
// API with the official SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/intentgate/intentgate/agent/provider"
)

// Options configure the provider.
type Options struct {
	APIKey  string
	BaseURL string // empty: the SDK's default
	HTTP    *http.Client
}

// Provider is the Anthropic Messages API.
type Provider struct{ client sdk.Client }

// New returns a provider. The SDK's own retries are off: the task retries,
// so the person sees each retry in the message stream.
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

func (p *Provider) Protocol() string { return "anthropic" }

// cachedUserTurns is how many of the last user messages carry a cache
// breakpoint: the newest one and the one before, so that the prefix the
// previous request wrote to the cache is read back.
const cachedUserTurns = 2

// Params builds the request parameters; exported for tests of the wire
// shape.
func Params(req *provider.Request) (sdk.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(maxTokens),
		System: []sdk.TextBlockParam{{
			Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam(),
		}},
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return p, fmt.Errorf("tool %s: schema: %w", t.Name, err)
		}
		in := sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				in.ExtraFields[k] = v
			}
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name: t.Name, Description: sdk.String(t.Description), InputSchema: in,
		}})
	}
	if len(p.Tools) > 0 {
		p.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}
	}
	userSeen := 0
	msgs := make([]sdk.MessageParam, len(req.Messages))
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		var blocks []sdk.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case provider.Text:
				blocks = append(blocks, sdk.NewTextBlock(b.Text))
			case provider.ToolUse:
				var input any = map[string]any{}
				if len(b.Input) > 0 {
					if err := json.Unmarshal(b.Input, &input); err != nil {
						input = map[string]any{}
					}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(b.ID, input, b.Name))
			case provider.ToolResult:
				blocks = append(blocks, toolResult(b))
			}
		}
		if m.Role == provider.User {
			if userSeen < cachedUserTurns && len(blocks) > 0 {
				last := &blocks[len(blocks)-1]
				switch {
				case last.OfText != nil:
					last.OfText.CacheControl = sdk.NewCacheControlEphemeralParam()
				case last.OfToolResult != nil:
					last.OfToolResult.CacheControl = sdk.NewCacheControlEphemeralParam()
				}
			}
			userSeen++
			msgs[i] = sdk.NewUserMessage(blocks...)
		} else {
			msgs[i] = sdk.NewAssistantMessage(blocks...)
		}
	}
	p.Messages = msgs
	return p, nil
}

// Stream sends req and streams the reply.
func (p *Provider) Stream(ctx context.Context, req *provider.Request, emit func(provider.Chunk)) (*provider.Reply, error) {
	body, err := encode(req)
	if err != nil {
		return nil, err
	}
	// The SDK is given empty params, and the body it built from them is
	// replaced on the way out: it would otherwise copy the whole body again
	// to add "stream", which the own body already has.
	stream := p.client.Messages.NewStreaming(ctx, sdk.MessageNewParams{}, option.WithMiddleware(
		func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			r.Body = body.reader()
			r.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
			r.ContentLength = int64(len(body.b))
			r.Header.Set("Content-Type", "application/json")
			return next(r)
		}))
	defer stream.Close()
	reply := &provider.Reply{}
	type open struct {
		block provider.Block
		args  []byte
		tool  int
	}
	blocks := map[int64]*open{}
	var order []int64
	tools := 0
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			reply.Usage.InputTokens = int(u.InputTokens)
			reply.Usage.CacheWriteTokens = int(u.CacheCreationInputTokens)
			reply.Usage.CacheReadTokens = int(u.CacheReadInputTokens)
			reply.Usage.OutputTokens = int(u.OutputTokens)
		case "content_block_start":
			cb := ev.ContentBlock
			o := &open{block: provider.Block{Type: cb.Type}}
			switch cb.Type {
			case "text":
				o.block.Text = cb.Text
				if cb.Text != "" {
					emit(provider.Chunk{Text: cb.Text})
				}
			case "tool_use":
				o.block.ID, o.block.Name, o.tool = cb.ID, cb.Name, tools
				tools++
				emit(provider.Chunk{ToolIndex: o.tool, ToolID: cb.ID, ToolName: cb.Name})
			default:
				continue // thinking and server blocks are not replayed
			}
			blocks[ev.Index] = o
			order = append(order, ev.Index)
		case "content_block_delta":
			o := blocks[ev.Index]
			if o == nil {
				continue
			}
			switch ev.Delta.Type {
			case "text_delta":
				o.block.Text += ev.Delta.Text
				emit(provider.Chunk{Text: ev.Delta.Text})
			case "input_json_delta":
				o.args = append(o.args, ev.Delta.PartialJSON...)
				emit(provider.Chunk{ToolIndex: o.tool, ToolArgs: ev.Delta.PartialJSON})
			}
		case "message_delta":
			if ev.Usage.OutputTokens > 0 {
				reply.Usage.OutputTokens = int(ev.Usage.OutputTokens)
			}
			if ev.Usage.InputTokens > 0 {
				reply.Usage.InputTokens = int(ev.Usage.InputTokens)
			}
			reply.StopReason = string(ev.Delta.StopReason)
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) {
			return nil, &provider.StatusError{Status: apiErr.StatusCode, Message: apiErr.Error()}
		}
		return nil, err
	}
	for _, i := range order {
		o := blocks[i]
		if o.block.Type == provider.ToolUse {
			o.block.Input = json.RawMessage(o.args)
			if len(o.args) == 0 {
				o.block.Input = json.RawMessage("{}")
			}
		}
		reply.Content = append(reply.Content, o.block)
	}
	return reply, nil
}

// toolResult is a tool_result block: its text, then its images as base64
// image blocks (a data URL that is not base64 is left out).
func toolResult(b provider.Block) sdk.ContentBlockParamUnion {
	r := sdk.NewToolResultBlock(b.ToolUseID, b.Content, b.IsError)
	for _, u := range b.Images {
		mt, data, ok := provider.DataURL(u)
		if !ok {
			continue
		}
		img := sdk.NewImageBlockBase64(mt, data)
		r.OfToolResult.Content = append(r.OfToolResult.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
	}
	return r
}
