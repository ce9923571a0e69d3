package hooks

import (
	"context"
	"fmt"
	"sync"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// Protected refuses changes to the governance files (always) and to paths
// matched by .intentignore, under every intent, and any change whose path
// cannot be canonicalized inside the workspace. Reading tools resolve their
// own path (a file or a directory) through the same canonicalizer.
func Protected(ws *engine.Workspace) engine.PreHook {
	ig := &ignoreCache{ws: ws}
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		if !isMutating(c) {
			return nil
		}
		rel, ok, err := c.Target()
		if err != nil || !ok {
			return err
		}
		if orchestration.IsGoverned(rel) {
			return &engine.Denial{Code: engine.ProtectedPath, Path: rel,
				Message: fmt.Sprintf("%s is a governance file; no agent may change it under any intent", rel),
				Hint:    "leave intentgate's files, git's and the agents' hook configuration to people"}
		}
		m, err := ig.get()
		if err != nil {
			return err
		}
		if m.Match(rel, false) {
			return &engine.Denial{Code: engine.ProtectedPath, Path: rel,
				Message: fmt.Sprintf("%s matches .intentignore; it may not be modified under any intent", rel),
				Hint:    "choose another file, or ask a person to change .intentignore"}
		}
		return nil
	})
}

func isMutating(c *engine.Call) bool {
	spec, known := c.Spec()
	return !known || spec.Mutating()
}

// ignoreCache reloads .intentignore when its size or mtime changes, so a long
// session sees edits without re-parsing it for every call.
type ignoreCache struct {
	ws    *engine.Workspace
	mu    sync.Mutex
	stamp string
	m     *orchestration.Ignore
}

func (c *ignoreCache) get() (*orchestration.Ignore, error) {
	stamp := ""
	if fi, err := c.ws.Stat(".intentignore"); err == nil {
		stamp = fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil && stamp == c.stamp {
		return c.m, nil
	}
	m, err := orchestration.LoadIgnore(c.ws.Dir)
	if err != nil {
		return nil, err
	}
	c.m, c.stamp = m, stamp
	return m, nil
}
