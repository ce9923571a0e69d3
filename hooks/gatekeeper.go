// Package hooks holds intentgate's policies. Each policy is a small value
// built by a constructor and plugged into the engine as a pre-hook (it may
// refuse a call) or a post-hook (it records what a call did).
package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// SelectTool is the tool that picks the session's intent; the gatekeeper lets
// it through without one.
const SelectTool = "select_active_intent"

// Gatekeeper refuses mutating calls unless the session has selected an
// intent that is declared and IN_PROGRESS. Tools the registry does not know
// count as mutating. For every call it fills in c.Intent when the session has
// one, so later hooks and the ledger know it.
func Gatekeeper(intents Intents, sessions *orchestration.SessionStore) engine.PreHook {
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		mutating := c.Mutating()
		if c.Tool == SelectTool {
			return nil
		}
		if c.Session == "" {
			if !mutating {
				return nil
			}
			return &engine.Denial{Code: engine.NoActiveIntent,
				Message: "the call carries no session id, so no intent can be active",
				Hint:    "send a session id with every call, then call select_active_intent"}
		}
		s, err := CallSession(c, sessions)
		if err != nil {
			return err
		}
		c.Intent = s.Intent
		if c.Mode == "" {
			c.Mode = s.Mode
		}
		if !mutating {
			return nil
		}
		set, err := CallIntents(c, intents)
		if err != nil {
			return err
		}
		if s.Intent == "" {
			return &engine.Denial{Code: engine.NoActiveIntent,
				Message: fmt.Sprintf("%s changes the workspace, and this session has not selected an intent", c.Tool),
				Hint:    "call select_active_intent with one of: " + inProgressIDs(set)}
		}
		in, ok := set.Get(s.Intent)
		if !ok {
			return &engine.Denial{Code: engine.UnknownIntent, Intent: s.Intent,
				Message: fmt.Sprintf("intent %s is no longer declared in active_intents.yaml", s.Intent),
				Hint:    "call select_active_intent with one of: " + inProgressIDs(set)}
		}
		if in.Status != orchestration.StatusInProgress {
			return &engine.Denial{Code: engine.IntentNotActive, Intent: in.ID,
				Message: fmt.Sprintf("intent %s is %s, not IN_PROGRESS", in.ID, in.Status),
				Hint:    "select an IN_PROGRESS intent: " + inProgressIDs(set)}
		}
		return nil
	})
}

func inProgressIDs(set *orchestration.IntentSet) string {
	var ids []string
	for _, in := range set.Intents {
		if in.Status == orchestration.StatusInProgress {
			ids = append(ids, in.ID)
		}
	}
	if len(ids) == 0 {
		return "(none is IN_PROGRESS; ask a person to start one in .orchestration/active_intents.yaml)"
	}
	return strings.Join(ids, ", ")
}

// Intents is where the policies get the intents in force: the live-reloading
// store in production, anything that fails closed when it cannot answer.
type Intents interface {
	Current() (*orchestration.IntentSet, error)
}
