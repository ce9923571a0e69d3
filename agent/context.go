package agent

import (
	"fmt"

	"github.com/intentgate/intentgate/agent/provider"
)

// defaultContextWindow is assumed for a model the price table does not know.
const defaultContextWindow = 128000

// contextLimit is the share of the window the context may fill before the
// oldest turns are dropped, leaving room for the reply.
const contextLimit = 0.8

// manageContext drops the oldest half of the turns when the last request's
// context neared the model's window. The first message (the task) always
// stays; turns go in assistant/user pairs so that every tool_result keeps
// its tool_use. The person sees a condense_context message saying what
// went.
func (t *Task) manageContext() {
	window := defaultContextWindow
	if p, ok := PriceOf(t.opts.Prices, t.opts.Model); ok && p.ContextWindow > 0 {
		window = p.ContextWindow
	}
	if t.opts.ContextWindow > 0 {
		window = t.opts.ContextWindow
	}
	prev := t.usage.ContextTokens
	if float64(prev) < contextLimit*float64(window) {
		return
	}
	t.mu.Lock()
	n := len(t.history)
	// history is u0, a1, u1, ..., ak, uk (the newest user message is not
	// in it yet). Remove half of the pairs after u0, an even count.
	pairs := (n - 1) / 2
	drop := (pairs / 2) * 2
	if drop < 2 {
		drop = min(2, pairs*2)
	}
	if drop <= 0 {
		t.mu.Unlock()
		return
	}
	before := size(t.history)
	t.history = append(t.history[:1:1], t.history[1+drop:]...)
	after := size(t.history)
	t.mu.Unlock()
	newTokens := prev
	if before > 0 {
		newTokens = prev * after / before
	}
	t.usage.ContextTokens = newTokens
	cc := &ContextCondense{PrevContextTokens: prev, NewContextTokens: newTokens,
		Summary: fmt.Sprintf("The context neared the model's window of %d tokens: the %d oldest messages after the task were dropped (sliding window).", window, drop)}
	t.add(Message{TS: t.ts(), Type: TypeSay, Say: SayCondenseContext, ContextCondense: cc})
}

func size(h []provider.Message) int {
	n := 0
	for _, m := range h {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Content) + len(b.Input)
		}
	}
	return n
}
