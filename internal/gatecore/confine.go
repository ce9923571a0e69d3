package gatecore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/sandbox"
	"github.com/intentgate/intentgate/orchestration"
)

// confinement is the sandbox policy of a command run in the workspace root
// under intentID: writable beneath the static roots of the intent's
// owned_scope, nothing else in the workspace. A config.yaml that cannot be
// read refuses the command rather than guessing.
func confinement(root string, set *orchestration.IntentSet, intentID string) (*sandbox.Policy, error) {
	cfg, err := sandbox.LoadConfig(filepath.Join(root, orchestration.DirName))
	if err != nil {
		return nil, fmt.Errorf("%w; fix the sandbox section of the file", err)
	}
	var scope []string
	if set != nil && intentID != "" {
		if in, ok := set.Get(intentID); ok {
			scope = in.OwnedScope
		}
	}
	p, err := sandbox.ForScope(root, scope, cfg)
	if err != nil {
		return nil, err
	}
	// The workspaces' keys: a command that read one could authenticate
	// session files and pictures of its own making.
	p.Hide(anchorBase())
	return p, nil
}

// anchorBase is the directory holding every workspace's anchor (its key),
// as orchestration.AnchorDir finds it.
func anchorBase() string {
	if b := os.Getenv(orchestration.AnchorDirEnv); b != "" {
		return b
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cfg, "intentgate")
}

// confineCommand is the policy of an execute_command call: the intent the
// gatekeeper found for its session, as the intents stand before it runs.
func (rt *Runtime) confineCommand(c *engine.Call) (*sandbox.Policy, error) {
	var set *orchestration.IntentSet
	if c.Intent != "" {
		var err error
		if set, err = rt.Intents().Current(); err != nil {
			return nil, err
		}
	}
	return confinement(rt.ws.Dir, set, c.Intent)
}

// Confinement is the policy for a command of session in the governed
// workspace at root (Find finds it), and the session's active intent, read
// from the files no confined command can write: writable beneath the static
// roots of that intent's owned_scope. No session, or one without an intent,
// may write nothing in the workspace. It opens no store and changes nothing,
// so `intentgate exec` can ask it for every command.
func Confinement(root, session string) (*sandbox.Policy, string, error) {
	orch := filepath.Join(root, orchestration.DirName)
	if err := orchestration.CheckIntact(orch); err != nil {
		return nil, "", err
	}
	intent := ""
	if session != "" {
		s, err := orchestration.OpenSessions(filepath.Join(orch, orchestration.SessionsDir)).Load(session)
		if err != nil {
			return nil, "", err
		}
		intent = s.Intent
	}
	var set *orchestration.IntentSet
	if intent != "" {
		var err error
		if set, err = orchestration.LoadIntents(filepath.Join(orch, orchestration.IntentsName)); err != nil {
			return nil, "", err
		}
	}
	p, err := confinement(root, set, intent)
	return p, intent, err
}
