package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intentgate/intentgate/agent/provider"
)

// request sends the history to the model, streaming the reply into the
// message stream, retrying failures with backoff and asking api_req_failed
// when retries run out.
func (t *Task) request(ctx context.Context, content []provider.Block) (*provider.Reply, Outcome, error) {
	for {
		delay := t.opts.RetryDelay
		var lastErr error
		for attempt := 0; attempt <= t.opts.Retries; attempt++ {
			if attempt > 0 {
				t.say(SayAPIReqRetryDelayed, fmt.Sprintf("%s\n\nRetry attempt %d of %d in %s", lastErr, attempt, t.opts.Retries, delay))
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return nil, Cancelled, nil
				}
				delay *= 2
			}
			reply, err := t.stream(ctx, content)
			if err == nil {
				return reply, "", nil
			}
			if ctx.Err() != nil {
				return nil, Cancelled, nil
			}
			lastErr = err
			var se *provider.StatusError
			if errors.As(err, &se) && !se.Retryable() {
				break
			}
		}
		a, err := t.ask(ctx, AskAPIReqFailed, lastErr.Error())
		if err != nil {
			return nil, Cancelled, nil
		}
		if a.Response == NoButtonClicked {
			return nil, Failed, nil
		}
		t.say(SayAPIReqRetried, "")
	}
}

func requestText(content []provider.Block) string {
	var parts []string
	for _, b := range content {
		switch b.Type {
		case provider.Text:
			if strings.HasPrefix(b.Text, "<environment_details>") {
				parts = append(parts, "<environment_details>\n(see the request)\n</environment_details>")
				continue
			}
			parts = append(parts, b.Text)
		case provider.ToolResult:
			parts = append(parts, b.Content)
		}
	}
	s := strings.Join(parts, "\n\n")
	if len(s) > 4000 {
		s = s[:4000] + "\n(truncated)"
	}
	return s
}

func (t *Task) stream(ctx context.Context, content []provider.Block) (*provider.Reply, error) {
	// The history is only appended to (or replaced whole), so the request
	// shares it instead of copying it: the slice is capped so that nothing
	// appended later shows through.
	t.mu.Lock()
	hist := t.history[:len(t.history):len(t.history)]
	t.mu.Unlock()
	req := &provider.Request{Model: t.opts.Model, System: t.opts.System(t.mode), Messages: hist,
		Tools: t.toolsFor(t.mode), MaxTokens: t.opts.MaxTokens, Cache: &t.wire}
	info := APIReqInfo{Request: requestText(content), APIProtocol: t.protocol()}
	started := t.ts()
	t.add(Message{TS: started, Type: TypeSay, Say: SayAPIReqStarted, Text: mustJSON(info), APIProtocol: t.protocol()})

	var textTS int64
	var text strings.Builder
	partial := true
	reply, err := t.opts.Provider.Stream(ctx, req, func(c provider.Chunk) {
		if c.Text == "" {
			return
		}
		if textTS == 0 {
			textTS = t.ts()
		}
		text.WriteString(c.Text)
		t.add(Message{TS: textTS, Type: TypeSay, Say: SayText, Text: text.String(), Partial: &partial})
	})
	if textTS != 0 {
		final := text.String()
		if reply != nil {
			final = ""
			for _, b := range reply.Content {
				if b.Type == provider.Text {
					final += b.Text
				}
			}
		}
		t.add(Message{TS: textTS, Type: TypeSay, Say: SayText, Text: final})
	}
	if err != nil {
		if ctx.Err() != nil {
			info.CancelReason = "user_cancelled"
		} else {
			info.CancelReason = "streaming_failed"
		}
		info.StreamingFailedMessage = err.Error()
		info.Cost = ptr(0.0)
		t.update(started, mustJSON(info))
		return nil, err
	}
	u := reply.Usage
	price, _ := PriceOf(t.opts.Prices, t.opts.Model)
	cost := price.Cost(u)
	info.TokensIn, info.TokensOut = ptr(u.InputTokens), ptr(u.OutputTokens)
	info.CacheWrites, info.CacheReads = ptr(u.CacheWriteTokens), ptr(u.CacheReadTokens)
	info.Cost = &cost
	t.usage.TotalTokensIn += u.InputTokens
	t.usage.TotalTokensOut += u.OutputTokens
	t.usage.TotalCacheWrites += u.CacheWriteTokens
	t.usage.TotalCacheReads += u.CacheReadTokens
	t.usage.TotalCost += cost
	t.usage.ContextTokens = u.InputTokens + u.OutputTokens + u.CacheWriteTokens + u.CacheReadTokens
	t.update(started, mustJSON(info))
	usage := t.usage
	t.emit(Event{Name: EventTokenUsage, State: t.State(), TokenUsage: &usage})
	return reply, nil
}

// toolsFor returns the tool definitions of a mode, built once per task: the
// same slice every request, which lets the provider keep their encoding.
func (t *Task) toolsFor(mode string) []provider.Tool {
	if ts, ok := t.tools4[mode]; ok {
		return ts
	}
	if t.tools4 == nil {
		t.tools4 = map[string][]provider.Tool{}
	}
	var ts []provider.Tool
	if t.opts.Tools != nil {
		ts = t.opts.Tools(mode)
	}
	t.tools4[mode] = ts
	return ts
}
