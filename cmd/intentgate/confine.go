package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/sandbox"
	"github.com/intentgate/intentgate/orchestration"
)

// confinement is the sandbox policy of a command run in the workspace ws
// under intentID: writable beneath the static roots of the intent's
// owned_scope, nothing else in the workspace. A config.yaml that cannot be
// read refuses the command rather than guessing.
func confinement(ws string, set *orchestration.IntentSet, intentID string) (*sandbox.Policy, error) {
	cfg, err := sandbox.LoadConfig(filepath.Join(ws, ".orchestration"))
	if err != nil {
		return nil, fmt.Errorf("%w; fix the sandbox section of the file", err)
	}
	var scope []string
	if in, ok := set.Get(intentID); ok && intentID != "" {
		scope = in.OwnedScope
	}
	return sandbox.ForScope(ws, scope, cfg)
}

// confineCommand is the policy of an execute_command call: the intent the
// gatekeeper found for its session, as the intents stand before it runs.
func (g *governed) confineCommand(c *engine.Call) (*sandbox.Policy, error) {
	var set *orchestration.IntentSet
	if c.Intent != "" {
		var err error
		if set, err = g.intents.Current(); err != nil {
			return nil, err
		}
	}
	return confinement(g.ws.Dir, set, c.Intent)
}

// sessionConfinement is the policy for a command of session in ws: the
// session's active intent, read from the files no confined command can
// write. No session, or one without an intent, may write nothing in the
// workspace.
func sessionConfinement(ws, session string) (*sandbox.Policy, string, error) {
	orch := filepath.Join(ws, ".orchestration")
	if err := orchestration.CheckIntact(orch); err != nil {
		return nil, "", err
	}
	intent := ""
	if session != "" {
		s, err := orchestration.OpenSessions(filepath.Join(orch, "sessions")).Load(session)
		if err != nil {
			return nil, "", err
		}
		intent = s.Intent
	}
	var set *orchestration.IntentSet
	if intent != "" {
		var err error
		if set, err = orchestration.LoadIntents(filepath.Join(orch, "active_intents.yaml")); err != nil {
			return nil, "", err
		}
	}
	p, err := confinement(ws, set, intent)
	return p, intent, err
}

// governedRoot is the nearest directory from start upwards that has
// .orchestration/.
func governedRoot(start string) (string, bool) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", false
	}
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".orchestration")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
