package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// CommandAudit judges what a command changed, since a command line cannot be
// judged before it runs: every change outside the intent's scope, to a
// protected path, or through a symlink leaving the workspace is marked as a
// violation, so the trace records it as one. Changes of edit tools were
// checked before they ran and pass as is.
//
// The governed runtime calls Judge as soon as a command's changes are known
// (to apply on_violation and tell the model); as a post-hook it judges
// again whatever reaches Observe, so that no caller can record a command's
// changes unjudged. Judging is idempotent and safe for concurrent use.
type CommandAudit struct {
	ws      *engine.Workspace
	intents Intents
	ig      *ignoreCache
}

var _ engine.PostHook = (*CommandAudit)(nil)

// NewCommandAudit returns the command judge.
func NewCommandAudit(ws *engine.Workspace, intents Intents) *CommandAudit {
	return &CommandAudit{ws: ws, intents: intents, ig: &ignoreCache{ws: ws}}
}

// Post judges the changes of a command-group call (or of a tool the registry
// does not know).
func (a *CommandAudit) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	spec, known := c.Spec()
	if known && spec.Group != engine.GroupCommand || len(r.Changes) == 0 {
		return nil
	}
	a.Judge(c, r.Changes)
	return nil
}

// Judge marks every change the call's intent does not allow as a violation,
// with the reason in its Reason, and returns how many it marked.
func (a *CommandAudit) Judge(c *engine.Call, changes []engine.FileChange) int {
	var in *orchestration.Intent
	if set, err := a.intents.Current(); err == nil {
		in, _ = set.Get(c.Intent)
	}
	m, igErr := a.ig.get()
	// A command is judged by the rules in force before it ran. If it
	// changed them, the files as they were (from the picture taken before
	// it) decide; if their old content is unknown, nothing the command
	// changed can be judged as allowed.
	if old, changed := rulesBefore(changes, ".orchestration/active_intents.yaml"); changed {
		in = nil
		if old != nil {
			if set, err := orchestration.ParseIntents(".orchestration/active_intents.yaml", old); err == nil {
				in, _ = set.Get(c.Intent)
			}
		}
	}
	if old, changed := rulesBefore(changes, ".intentignore"); changed {
		if old == nil {
			igErr = fmt.Errorf("the command changed .intentignore and its earlier content is unknown")
		} else {
			m, igErr = orchestration.ParseIgnore(old), nil
		}
	}
	bad := 0
	for i := range changes {
		ch := &changes[i]
		if ch.Violation {
			bad++
			continue // judged already
		}
		governed := orchestration.IsGoverned(ch.Path)
		if !governed && strings.HasPrefix(ch.Reason, AmbiguousReason) {
			// Another session changed it too, within its own scope:
			// neither the command's to judge nor to revert.
			continue
		}
		why := ""
		switch {
		case ch.Uninspected:
			why = ch.Reason
		case governed:
			why = "a governance file"
		case igErr != nil:
			why = "cannot read .intentignore: " + igErr.Error()
		case m.Match(ch.Path, false):
			why = "matches .intentignore"
		case in == nil:
			why = "no active intent"
		default:
			owns, _, err := in.Owns(ch.Path)
			if err != nil {
				why = "cannot match the scope: " + err.Error()
			} else if !owns {
				why = fmt.Sprintf("outside the owned_scope of %s (%s)", in.ID, strings.Join(in.OwnedScope, ", "))
			}
		}
		if why == "" && strings.HasPrefix(ch.Reason, "now a symbolic link") {
			if _, err := a.ws.Canonical(ch.Path); err != nil {
				why = "a symbolic link leading outside the workspace"
			}
		}
		if why != "" {
			ch.Violation = true
			ch.Reason = why
			bad++
		}
	}
	return bad
}

// rulesBefore says whether the command changed the rules file rel and, if
// it did, what the file held before (an empty slice for a file that did not
// exist, nil when the old content is unknown).
func rulesBefore(changes []engine.FileChange, rel string) ([]byte, bool) {
	for _, ch := range changes {
		if ch.Path != rel {
			continue
		}
		switch {
		case !ch.Existed:
			return []byte{}, true
		case ch.BeforeUnknown:
			return nil, true
		case ch.Before == nil:
			return []byte{}, true
		}
		return ch.Before, true
	}
	return nil, false
}
