// Package protocol holds the intent protocol section of what the model
// reads (package prompts puts it in every system prompt; a hook gives it to
// an external agent as context). It is its own package so that a hook
// process links it without the tool definitions.
package protocol

import (
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/engine"
)

// recovery says, per denial code, what it means and what the model should do.
var recovery = []struct {
	code engine.Code
	text string
}{
	{engine.NoActiveIntent, "you changed something before selecting an intent: call select_active_intent first."},
	{engine.UnknownIntent, "the intent id is not declared: pick one from the list you were given."},
	{engine.IntentNotActive, "the intent is not IN_PROGRESS: pick an IN_PROGRESS intent or ask the user."},
	{engine.ScopeViolation, "the file is outside your intent's owned_scope: stay inside it, or ask the user to widen the scope or to start another intent."},
	{engine.ProtectedPath, "the file is protected for every intent (governance files, .git, agent settings, .intentignore): leave it alone."},
	{engine.PathEscape, "the path leaves the workspace (.., an absolute path elsewhere, a symlink, a hard link or a special file): use a plain workspace-relative path."},
	{engine.NotRead, "you tried to overwrite a file you have not read: read the whole file with read_file, then write."},
	{engine.StaleFile, "the file changed since you read it: read it again and redo your change on the current content."},
	{engine.MissingParameter, "a required parameter is missing: call the tool again with it."},
	{engine.InvalidArgument, "a parameter is malformed: fix it as the message says."},
	{engine.ToolNotAllowed, "the current mode does not allow this tool or file: switch mode or ask the user."},
	{engine.HookError, "intentgate could not decide and refused to be safe: this is not your fault; tell the user the message."},
}

// IntentProtocol is the system prompt section that explains intent-bound
// work to the model.
func IntentProtocol() string {
	var b strings.Builder
	b.WriteString(`====

INTENT PROTOCOL

This workspace is governed by intentgate. Every change you make is checked and recorded.

1. Your first action must be select_active_intent with the id of the intent you are working on. Until you have selected one, every tool that changes files or runs commands is refused.
2. You may change only files matching the selected intent's owned_scope. Reading other files is fine.
3. Read a file completely before you overwrite it, and read it again if it may have changed.
4. Commands are checked by what they change: changes outside your scope are reported to you and recorded as violations.

A refused call returns JSON with "error" (a code), "message" and "hint". The codes:
`)
	for _, r := range recovery {
		fmt.Fprintf(&b, "- %s: %s\n", r.code, r.text)
	}
	return b.String()
}
