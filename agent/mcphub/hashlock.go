package mcphub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
)

// HashLock holds an MCP tool that can change the workspace to the rule of
// write_to_file: every existing file its path-like arguments name must have
// been read whole by the session, and be unchanged since. An MCP server's
// write_file, edit_file or move_file cannot destroy content the session has
// not seen. A tool annotated read-only, a path that does not exist yet and a
// directory are let through (the scope hooks judge those). It runs after
// hooks.PathArgScope, which refuses what cannot be canonicalized.
//
// After the call, the session has not seen what the server wrote: the hash
// lock's post-hook forgets its reads of the changed files, so a later edit
// reads them again.
func HashLock(reg *engine.Registry, ws *engine.Workspace, sessions *orchestration.SessionStore, h *Hub) engine.PreHook {
	argsOf := ArgsOf(h)
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		if c.Tool != UseToolName || !reg.MutatingCall(c) {
			return nil
		}
		args, base, _ := argsOf(c)
		found, err := hooks.PathArgs(args)
		if err != nil {
			return &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool,
				Message: "the tool's arguments cannot be checked: " + err.Error(),
				Hint:    "send plain JSON arguments with relative paths inside the workspace"}
		}
		rels, err := hooks.CanonicalPathArgs(ws, base, found)
		if err != nil {
			return err
		}
		var s *orchestration.Session
		for i, rel := range rels {
			fi, err := ws.Stat(rel)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("argument %s (%s): %w", found[i].Key, rel, err)
			}
			if fi.IsDir() {
				continue
			}
			cur, err := ws.ReadFile(rel)
			if err != nil {
				return fmt.Errorf("argument %s (%s): %w", found[i].Key, rel, err)
			}
			if s == nil {
				// The call's session as its other hooks see it, with the
				// changes held in memory for it (hooks.HeldSessions).
				if s, err = hooks.CallSession(c, sessions); err != nil {
					return err
				}
			}
			seen, read := s.Reads[rel]
			if !read {
				return &engine.Denial{Code: engine.NotRead, Path: rel, Intent: c.Intent, Parameter: found[i].Key,
					Message: fmt.Sprintf("%s (argument %s of MCP tool %s) exists and this session has not read it, so the tool could destroy work it has not seen", rel, found[i].Key, toolName(c)),
					Hint:    "call read_file on it first (the whole file), then call the MCP tool again"}
			}
			if actual := engine.Hash(cur); seen != actual {
				return &engine.Denial{Code: engine.StaleFile, Path: rel, Intent: c.Intent, Parameter: found[i].Key,
					ExpectedSHA256: seen, ActualSHA256: actual,
					Message: fmt.Sprintf("%s (argument %s of MCP tool %s) changed since this session last read it", rel, found[i].Key, toolName(c)),
					Hint:    "read the file again with read_file, then redo your change on the current content"}
			}
		}
		return nil
	})
}

func toolName(c *engine.Call) string {
	server, _, _ := c.String("server_name")
	tool, _, _ := c.String("tool_name")
	return server + "/" + tool
}
