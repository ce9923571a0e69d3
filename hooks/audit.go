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
// violation (so the trace records it as one) and reported to the agent in the
// result. Changes of edit tools were checked before they ran and pass as is.
func CommandAudit(reg *engine.Registry, ws *engine.Workspace, intents Intents) engine.PostHook {
	ig := &ignoreCache{ws: ws}
	return engine.PostFunc(func(ctx context.Context, c *engine.Call, r *engine.Result) error {
		spec, known := reg.Lookup(c.Tool)
		if known && spec.Group != engine.GroupCommand || len(r.Changes) == 0 {
			return nil
		}
		var in *orchestration.Intent
		if set, err := intents.Current(); err == nil {
			in, _ = set.Get(c.Intent)
		}
		m, igErr := ig.get()
		// A command is judged by the rules in force before it ran. If it
		// changed them, the files as they were (from the picture taken
		// before it) decide; if their old content is unknown, nothing the
		// command changed can be judged as allowed.
		if old, changed := rulesBefore(r.Changes, ".orchestration/active_intents.yaml"); changed {
			in = nil
			if old != nil {
				if set, err := orchestration.ParseIntents(".orchestration/active_intents.yaml", old); err == nil {
					in, _ = set.Get(c.Intent)
				}
			}
		}
		if old, changed := rulesBefore(r.Changes, ".intentignore"); changed {
			if old == nil {
				igErr = fmt.Errorf("the command changed .intentignore and its earlier content is unknown")
			} else {
				m, igErr = orchestration.ParseIgnore(old), nil
			}
		}
		var bad []string
		for i := range r.Changes {
			ch := &r.Changes[i]
			why := ""
			switch {
			case ch.Uninspected:
				why = ch.Reason
			case orchestration.IsGoverned(ch.Path):
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
				if _, err := ws.Canonical(ch.Path); err != nil {
					why = "a symbolic link leading outside the workspace"
				}
			}
			if why != "" {
				ch.Violation = true
				ch.Reason = why
				bad = append(bad, fmt.Sprintf("  %s: %s", ch.Path, why))
			}
		}
		if len(bad) > 0 {
			r.Output += fmt.Sprintf("\nSCOPE_VIOLATION: the command changed %d file(s) it was not allowed to change; "+
				"this was recorded in the ledger as a violation:\n%s\n"+
				"Undo these changes, or ask for the intent's scope to be widened.\n",
				len(bad), strings.Join(bad, "\n"))
		}
		return nil
	})
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
