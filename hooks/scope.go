package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// Scope refuses a mutating call whose canonical path lies outside the owned
// scope of the session's intent. It runs after Gatekeeper, which has set
// c.Intent. Any error while deciding refuses.
func Scope(intents Intents) engine.PreHook {
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		if !isMutating(c) {
			return nil
		}
		rel, ok, err := c.Target()
		if err != nil || !ok {
			return err
		}
		in, err := currentIntent(c, intents, c.Intent)
		if err != nil {
			return err
		}
		return checkScope(in, rel)
	})
}

func currentIntent(c *engine.Call, intents Intents, id string) (*orchestration.Intent, error) {
	set, err := CallIntents(c, intents)
	if err != nil {
		return nil, err
	}
	in, ok := set.Get(id)
	if !ok {
		return nil, &engine.Denial{Code: engine.UnknownIntent, Intent: id,
			Message: fmt.Sprintf("intent %q is not declared in active_intents.yaml", id),
			Hint:    "call select_active_intent with a declared intent"}
	}
	return in, nil
}

func checkScope(in *orchestration.Intent, rel string) error {
	owns, _, err := in.Owns(rel)
	if err != nil {
		return err
	}
	if owns {
		return nil
	}
	return &engine.Denial{Code: engine.ScopeViolation, Path: rel, Intent: in.ID,
		Message: fmt.Sprintf("%s is outside the owned_scope of %s (%s)", rel, in.ID, strings.Join(in.OwnedScope, ", ")),
		Hint:    fmt.Sprintf("choose an intent whose scope covers this file, or ask for %s's scope to be widened", in.ID)}
}
