package adapter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/prompts/protocol"
)

// sessionStart gives the model the intent protocol and the declared intents;
// a task that starts with a prompt (Cline's) may select one right away.
func (h *hookRun) sessionStart(ctx context.Context) Reply {
	current := ""
	if h.ev.Session != "" {
		if s, err := h.session(); err == nil {
			current = s.Intent
		}
	}
	text := externalContext(h.rt.Intents(), current)
	if strings.Contains(h.ev.Prompt, "@") {
		if sel := h.selectMentioned(ctx); sel != "" {
			text += "\n\n" + sel
		}
	}
	return Reply{Context: text}
}

// prompt selects the intent a prompt names as @INT-001.
func (h *hookRun) prompt(ctx context.Context) Reply {
	h.ev.Prompt = userText(h.ev.Prompt)
	return Reply{Context: h.selectMentioned(ctx)}
}

// hookContextRe matches the context hooks added to a prompt, which some
// agents (Gemini CLI) repeat in the prompt event: only what the user typed
// may select an intent.
var hookContextRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<hook_context>.*?</hook_context>|(?s)<intentgate>.*?</intentgate>|&lt;intentgate&gt;.*?&lt;/intentgate&gt;`)
})

func userText(prompt string) string { return hookContextRe().ReplaceAllString(prompt, "") }

// externalContext is what an external agent is told when its session starts.
func externalContext(intents hooks.Intents, current string) string {
	var b strings.Builder
	b.WriteString("<intentgate>\nThis workspace is governed by intentgate: its hooks check every file change and command you make here.\n")
	b.WriteString("To select an intent, call the select_active_intent tool of the \"intentgate\" MCP server with its intent_id, " +
		"or ask the user to name it in a prompt: an @ followed by the intent's id.\n")
	b.WriteString(protocol.IntentProtocol())
	set, err := intents.Current()
	switch {
	case err != nil:
		fmt.Fprintf(&b, "\nThe intents cannot be loaded (%v): every change is refused until a person fixes .orchestration/active_intents.yaml.\n", err)
	case len(set.Intents) == 0:
		b.WriteString("\nNo intents are declared: every change is refused until a person declares one in .orchestration/active_intents.yaml.\n")
	default:
		b.WriteString("\nDeclared intents (only IN_PROGRESS ones can be selected):\n")
		for _, in := range set.Intents {
			fmt.Fprintf(&b, "- %s [%s] %s; owned_scope: %s\n", in.ID, in.Status, oneLineText(in.Name), strings.Join(in.OwnedScope, ", "))
		}
	}
	if current != "" {
		fmt.Fprintf(&b, "This session's active intent: %s.\n", current)
	} else {
		b.WriteString("This session has not selected an intent yet.\n")
	}
	b.WriteString("</intentgate>")
	return b.String()
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	mentionRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@([\p{L}\p{N}][\p{L}\p{N}._-]*)`) })
	intentLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]+-[0-9]+$`) })
)

// mentionedIntent finds the intent a prompt names as @ID: the first declared
// one, or else the first mention that looks like an intent id (so that a
// mistyped one is answered, not ignored).
func mentionedIntent(prompt string, set *orchestration.IntentSet) (string, bool) {
	guess := ""
	for _, m := range mentionRe().FindAllStringSubmatch(prompt, -1) {
		id := strings.TrimRight(m[1], "._-")
		if _, ok := set.Get(id); ok {
			return id, true
		}
		if guess == "" && intentLike().MatchString(id) {
			guess = id
		}
	}
	return guess, guess != ""
}

// selectMentioned selects the intent the prompt names, through the engine,
// and returns what the model should be told: the intent's context, or why
// it could not be selected.
func (h *hookRun) selectMentioned(ctx context.Context) string {
	set, _ := h.rt.Intents().Current()
	id, ok := mentionedIntent(h.ev.Prompt, set)
	if !ok {
		return ""
	}
	c := h.call(0, hooks.SelectTool, map[string]any{"intent_id": id})
	res, err := h.rt.Dispatch(ctx, c)
	var pe *engine.PostError
	switch {
	case err == nil, errors.As(err, &pe):
		if pe != nil {
			h.warnf("the intent was selected but not fully recorded: %v", err)
		}
		return fmt.Sprintf("The user selected intent %s for this session.\n%s", id, res.Output)
	}
	d := asDenial(err, c.Tool)
	return fmt.Sprintf("The user named @%s, but it could not be selected: %s", id, d.JSON())
}
