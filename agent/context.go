package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/agent/provider"
)

// defaultContextWindow is assumed for a model the price table does not know.
const defaultContextWindow = 128000

// contextLimit is the share of the window the context may fill before it is
// condensed, leaving room for the reply.
const contextLimit = 0.8

// keepMessages is how many of the newest history messages stay as they are
// when the rest is condensed: the assistant message before the last, its
// results, and the last assistant message (whose results are pending).
const keepMessages = 3

// summaryPrompt is the system prompt of a condensing request.
const summaryPrompt = `You summarize a conversation between a user and an AI coding agent so that the agent can go on with the task from the summary alone.

Write a detailed summary with these sections:
1. Previous Conversation: what was asked and discussed, in order.
2. Current Work: what was being done just before this summary, in detail.
3. Key Technical Concepts: technologies, conventions and decisions.
4. Relevant Files and Code: every file read, created or changed, with what matters about it.
5. Problem Solving: problems met and how they were solved, or where they stand.
6. Pending Tasks and Next Steps: what remains, quoting the most recent instructions verbatim where they matter.

Answer with the summary as plain text only. Do not call a tool.`

// summaryRequest is the user message that asks for the summary.
const summaryRequest = "Summarize the conversation so far, as described in the instructions. This summary replaces the conversation's earlier messages."

// contextWindow is the model's window: the option, else the price table,
// else a default.
func (t *Task) contextWindow() int {
	window := defaultContextWindow
	if p, ok := PriceOf(t.opts.Prices, t.opts.Model); ok && p.ContextWindow > 0 {
		window = p.ContextWindow
	}
	if t.opts.ContextWindow > 0 {
		window = t.opts.ContextWindow
	}
	return window
}

// manageContext keeps the next request within the model's window. When the
// last request's context neared it, the model is asked to summarize the
// conversation between the task and the newest messages, which the summary
// then replaces (condense_context, with the summary's cost and the context
// before and after). When that fails the oldest messages after the task are
// dropped instead (sliding window) and condense_context_error says why and
// what went. The first message, which holds the task, always stays.
func (t *Task) manageContext(ctx context.Context) {
	window := t.contextWindow()
	prev := t.usage.ContextTokens
	if float64(prev) < contextLimit*float64(window) {
		return
	}
	err := t.condense(ctx, prev)
	if err == nil || ctx.Err() != nil {
		return
	}
	dropped := t.truncate(prev)
	text := fmt.Sprintf("Condensing the context failed: %v.", err)
	if dropped > 0 {
		text += fmt.Sprintf(" The context neared the model's window of %d tokens, so the %d oldest messages after the task were dropped instead (sliding window); the task itself is kept.", window, dropped)
	}
	t.say(SayCondenseContextError, text)
}

// errNothingToCondense: the history is too short to condense.
var errNothingToCondense = errors.New("the conversation is too short to condense")

// condense replaces the history between the task and the newest messages
// with a summary written by the model.
func (t *Task) condense(ctx context.Context, prev int) error {
	if t.opts.Provider == nil {
		return errors.New("no model to ask for a summary")
	}
	t.mu.Lock()
	hist := t.history[:len(t.history):len(t.history)]
	t.mu.Unlock()
	n := len(hist)
	// The history is u0, a1, u1, ..., ak: the kept tail starts with an
	// assistant message, so every tool_result keeps its tool_use.
	cut := n - keepMessages
	if cut < 2 || hist[cut].Role != provider.Assistant || hist[cut-1].Role != provider.User {
		return errNothingToCondense
	}
	// The messages to summarize, with the request for the summary added to
	// the last (user) one.
	msgs := append([]provider.Message(nil), hist[:cut]...)
	last := msgs[cut-1]
	last.Content = append(append([]provider.Block(nil), last.Content...), provider.Block{Type: provider.Text, Text: summaryRequest})
	msgs[cut-1] = last
	req := &provider.Request{Model: t.opts.Model, System: summaryPrompt, Messages: msgs,
		Tools: t.toolsFor(t.mode), MaxTokens: t.opts.MaxTokens}
	reply, err := t.opts.Provider.Stream(ctx, req, func(provider.Chunk) {})
	if err != nil {
		return fmt.Errorf("the summary request failed: %w", err)
	}
	var summary strings.Builder
	for _, b := range reply.Content {
		if b.Type == provider.Text {
			summary.WriteString(b.Text)
		}
	}
	u := reply.Usage
	price, _ := PriceOf(t.opts.Prices, t.opts.Model)
	cost := price.Cost(u)
	// The summary request is paid for whether or not it is used.
	t.usage.TotalTokensIn += u.InputTokens
	t.usage.TotalTokensOut += u.OutputTokens
	t.usage.TotalCacheWrites += u.CacheWriteTokens
	t.usage.TotalCacheReads += u.CacheReadTokens
	t.usage.TotalCost += cost
	text := strings.TrimSpace(summary.String())
	if text == "" {
		return errors.New("the model answered without a summary")
	}
	// The task message keeps its blocks; the summary follows them.
	first := hist[0]
	first.Content = append(append([]provider.Block(nil), first.Content...), provider.Block{Type: provider.Text,
		Text: "<conversation_summary>\nThe conversation after the task was condensed to save context. Summary of it:\n\n" + text + "\n</conversation_summary>"})
	next := append([]provider.Message{first}, hist[cut:]...)
	newTokens := prev
	if before := size(hist); before > 0 {
		newTokens = prev * size(next) / before
	}
	if newTokens >= prev {
		return fmt.Errorf("the summary (%d tokens estimated) did not make the context smaller than %d tokens", newTokens, prev)
	}
	t.mu.Lock()
	t.history = next
	t.mu.Unlock()
	t.usage.ContextTokens = newTokens
	cc := &ContextCondense{Cost: cost, PrevContextTokens: prev, NewContextTokens: newTokens, Summary: text}
	t.add(Message{TS: t.ts(), Type: TypeSay, Say: SayCondenseContext, ContextCondense: cc})
	return nil
}

// truncate drops the oldest half of the turns after the task, in
// assistant/user pairs so that every tool_result keeps its tool_use, and
// returns how many messages went.
func (t *Task) truncate(prev int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.history)
	// history is u0, a1, u1, ..., ak (the newest user message is not in it
	// yet). Remove half of the pairs after u0, an even count, keeping ak.
	pairs := (n - 1) / 2
	drop := (pairs / 2) * 2
	if drop < 2 {
		drop = min(2, pairs*2)
	}
	if 1+drop >= n {
		drop = ((n - 2) / 2) * 2
	}
	if drop <= 0 {
		return 0
	}
	before := size(t.history)
	t.history = append(t.history[:1:1], t.history[1+drop:]...)
	if before > 0 {
		t.usage.ContextTokens = prev * size(t.history) / before
	}
	return drop
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
