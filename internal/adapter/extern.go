package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
)

// What the hook does for the calls of external agents beyond the built-in
// file tools: MCP tools of other servers, tools it cannot classify, changes
// reported after the fact that the pre-hooks would have refused.

// preMCP authorizes a call to an MCP tool of another server (intentgate's
// own included: no server is trusted by its name). Every path-like argument
// is canonicalized and checked as a change under the session's intent
// (scope, protected paths); the call itself needs an intent, like a command,
// and the workspace is pictured so that the post event can record what the
// tool changed.
func (h *hookRun) preMCP(ctx context.Context, i int, op Op) *engine.Denial {
	tool := mcpTool(op)
	for _, p := range mcpPaths(op.Args) {
		c := h.call(i, tool, map[string]any{"path": h.abs(p)})
		if err := h.rt.Authorize(ctx, c); err != nil {
			return asDenial(err, tool)
		}
	}
	args := op.Args
	if len(args) == 0 || args[0] != '{' {
		b, _ := json.Marshal(map[string]json.RawMessage{"arguments": orNull(args)})
		args = b
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil {
		// A "path" the tool has was checked above, canonicalized; the whole
		// call is checked for its intent only.
		delete(m, "path")
		args, _ = json.Marshal(m)
	}
	c := h.call(i, tool, args)
	if err := h.rt.Authorize(ctx, c); err != nil {
		return asDenial(err, tool)
	}
	if err := h.saveSnapshot(); err != nil {
		return &engine.Denial{Code: engine.HookError, Tool: tool,
			Message: "the workspace cannot be pictured before the MCP call, so what it changes could not be judged: " + err.Error(),
			Hint:    "this is not about your call; tell the user"}
	}
	return nil
}

// postMCP records what an MCP call changed, judged like a command's changes.
func (h *hookRun) postMCP(ctx context.Context, i int, op Op) string {
	c := h.call(i, mcpTool(op), map[string]any{"command": mcpTool(op) + " " + string(orNull(op.Args))})
	return h.observeCommand(ctx, c)
}

// pathKeys are the argument names that hold a file or directory path in the
// MCP tools agents use (filesystem servers, editors, git servers).
var pathKeys = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "file_path": true, "filepath": true,
	"filePath": true, "file_paths": true, "filename": true, "fileName": true, "notebook_path": true,
	"source": true, "src": true, "destination": true, "dest": true, "target": true, "target_file": true,
	"targetFile": true, "new_path": true, "old_path": true, "newPath": true, "oldPath": true,
	"from": true, "to": true, "directory": true, "dir": true, "cwd": true, "root": true,
	"repo_path": true, "repoPath": true, "workspace": true, "output": true, "output_path": true,
	"outputPath": true, "uri": true, "url": true, "resource": true, "location": true,
}

// mcpPaths lists the paths an MCP call's arguments name: the string values
// (alone or in lists, at any depth) under a path-like key, and every
// file: URI anywhere. A file: URI becomes its path; a value under "uri" or
// "url" that is not a file: URI is not a path.
func mcpPaths(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case string:
			if p, ok := fileURI(x); ok {
				add(p)
				return
			}
			if pathKeys[key] && key != "uri" && key != "url" && key != "resource" && !strings.Contains(x, "://") {
				add(x)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], k)
			}
		}
	}
	walk(v, "")
	return out
}

func fileURI(s string) (string, bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		// An unreadable file: URI still names a file: keep its text, which
		// the canonicalizer then refuses.
		return strings.TrimPrefix(s[5:], "//"), true
	}
	return filepath.FromSlash(u.Path), true
}

// postRefusal tells whether the pre-hooks would have refused the change a
// post event reports: the session's intent, the file's scope and the
// protected paths, without the hash lock (the file has changed since). The
// agent may have run the tool without the pre event (a matcher that left it
// out, an agent that ignored the answer): such a change is a violation.
func (h *hookRun) postRefusal(ctx context.Context, i int, op Op) string {
	c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
	err := h.rt.Check(ctx, c)
	if err == nil {
		return ""
	}
	d := asDenial(err, h.ev.Tool)
	switch d.Code {
	case engine.NotRead, engine.StaleFile:
		// The hash lock speaks of the file before the change; it has
		// changed since, so its answer now means nothing.
		return ""
	}
	return fmt.Sprintf("%s: %s", d.Code, d.Message)
}

// notReadHint is what an agent is told to do when it must read a file
// before changing it: the way that works in that agent.
func notReadHint(agent string) string {
	switch agent {
	case "codex":
		return "print the whole file first with `cat FILE` (or `sed -n '1,$p' FILE`) as a command of its own, then apply your patch"
	case "cline":
		return "read the whole file first with read_files, without start_line/end_line, then edit it"
	case "gemini":
		return "read the whole file first with read_file, without start_line/end_line, then edit it"
	case "claude-code":
		return "read the whole file first with Read, without offset/limit (a file too long for one Read cannot be edited through intentgate: ask the user), then edit it"
	case "cursor":
		return "read the whole file first, then edit it"
	}
	return ""
}

// agentDenial adapts a denial's hint to the agent that gets it.
func agentDenial(agent string, d *engine.Denial) *engine.Denial {
	if d != nil && d.Code == engine.NotRead {
		if hint := notReadHint(agent); hint != "" {
			d.Hint = hint
		}
	}
	return d
}

// Codex runs an apply_patch it finds in a shell command itself, and sends no
// post event for it. What the pre event allowed is therefore kept as pending
// in the session, with the files as they were, and recorded at the next
// event of the session (or at the call's own post event, should one come).

type pendingPatch struct {
	Taken time.Time        `json:"taken"`
	Tool  string           `json:"tool"`
	Ops   []pendingPatchOp `json:"ops"`
}

type pendingPatchOp struct {
	Kind OpKind `json:"kind"`
	Path string `json:"path"`
}

const pendingPrefix = statePrefix + "pending:"

// keepPending remembers the file ops of a call whose post event may never
// come.
func (h *hookRun) keepPending() {
	if h.ev.Agent != "codex" || h.ev.Session == "" {
		return
	}
	var ops []pendingPatchOp
	for _, op := range h.ev.Ops {
		switch op.Kind {
		case OpWrite, OpEdit, OpDelete:
			ops = append(ops, pendingPatchOp{op.Kind, op.Path})
		}
	}
	if len(ops) == 0 {
		return
	}
	if err := h.putState(pendingPrefix+h.ev.CallKey(), pendingPatch{Taken: time.Now().UTC(), Tool: h.ev.Tool, Ops: ops}); err != nil {
		h.warnf("cannot keep the patch for recording: %v", err)
	}
}

// settlePending records the pending patches of the session other than the
// current call's, whose files have changed by now if they ever will.
func (h *hookRun) settlePending(ctx context.Context) {
	if h.ev.Session == "" {
		return
	}
	s, err := h.session()
	if err != nil {
		return
	}
	var keys []string
	for k := range s.Snapshots {
		if strings.HasPrefix(k, pendingPrefix) && k != pendingPrefix+h.ev.CallKey() {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return
	}
	defer func() { h.sessLoaded = false }() // the settled patches changed it
	saved := *h.ev
	defer func() { *h.ev = saved }()
	intent, mode := h.intent, h.mode
	defer func() { h.intent, h.mode = intent, mode }()
	h.intent, h.mode = s.Intent, s.Mode
	for _, k := range keys {
		var p pendingPatch
		ok, err := h.takeState(k, &p)
		if err != nil || !ok {
			continue
		}
		// The recorded call is the patch's own: its key and tool.
		h.ev.CallID, h.ev.Tool = strings.TrimPrefix(k, pendingPrefix), p.Tool
		h.ev.Kind = PostTool
		for i, po := range p.Ops {
			op := Op{Kind: po.Kind, Path: po.Path}
			h.violation = h.postRefusal(ctx, i, op)
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
			h.observeFile(ctx, c, op)
		}
		h.violation = ""
	}
}
