package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// PathArg is one argument of a call to a tool that intentgate does not know
// the parameters of (an MCP server's tool) and that names a file.
type PathArg struct {
	Key   string // where it was found, e.g. "paths[1]" or "edits[0].file_path"
	Value string // the path as given; a file: URI is decoded to its path
}

// maxArgDepth bounds how deep PathArgs looks into nested arguments; deeper
// nesting is refused rather than left unchecked.
const maxArgDepth = 32

// PathArgs finds the arguments of an external tool's call that name files,
// so that they can be held to the same rules as intentgate's own tools'
// "path". It looks at every level of the arguments object. An argument
// counts as a path when its name (compared without case, "_" or "-") is one
// of path, paths, file, files, filename, dir, directory, folder, source,
// src, destination, dest, dst, target, root, cwd, workdir, or ends in path,
// paths, file, files, dir, dirs, directory or folder; its value is a string
// or a list of strings, and every string nested inside it counts. A string
// anywhere that is a file: URI counts too,
// whatever its name, and for uri and url arguments only file: URIs name
// files. Too much nesting and a file: URI of another host are errors: what
// cannot be read is not let through.
func PathArgs(args json.RawMessage) ([]PathArg, error) {
	if len(args) == 0 || string(args) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, err
	}
	var out []PathArg
	err := collectPaths(v, "", false, 0, &out)
	return out, err
}

var pathKeys = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "filename": true, "filenames": true,
	"dir": true, "directory": true, "folder": true, "source": true, "src": true,
	"destination": true, "dest": true, "dst": true, "target": true, "root": true,
	"cwd": true, "workdir": true, "workingdirectory": true,
}

var pathSuffixes = []string{"path", "paths", "file", "files", "dir", "dirs", "directory", "folder"}

func isPathKey(k string) bool {
	n := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k))
	if pathKeys[n] {
		return true
	}
	for _, s := range pathSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

func collectPaths(v any, at string, pathy bool, depth int, out *[]PathArg) error {
	if depth > maxArgDepth {
		return fmt.Errorf("arguments nested deeper than %d levels at %s", maxArgDepth, at)
	}
	switch x := v.(type) {
	case string:
		if hasFileScheme(x) {
			p, err := fileURIPath(x)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			*out = append(*out, PathArg{Key: at, Value: p})
		} else if pathy {
			*out = append(*out, PathArg{Key: at, Value: x})
		}
	case []any:
		for i, e := range x {
			if err := collectPaths(e, fmt.Sprintf("%s[%d]", at, i), pathy, depth+1, out); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			key := k
			if at != "" {
				key = at + "." + k
			}
			if err := collectPaths(x[k], key, pathy || isPathKey(k), depth+1, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasFileScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

func fileURIPath(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("file URI %q: %v", s, err)
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", fmt.Errorf("file URI %q names host %q; only local files can be checked", s, u.Host)
	}
	p := u.Path
	if p == "" {
		p = u.Opaque // file:relative/name
	}
	return filepath.FromSlash(p), nil
}

// CanonicalPathArgs canonicalizes the path arguments of a call: each is
// resolved against base (the directory the tool resolves relative paths in;
// "" is the workspace root) and must lie inside the workspace. "." stands for
// the workspace root itself. A path starting with "~" is refused, since
// tools commonly expand it to the home directory.
func CanonicalPathArgs(ws *engine.Workspace, base string, paths []PathArg) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, pa := range paths {
		p := pa.Value
		if strings.HasPrefix(p, "~") {
			return nil, &engine.Denial{Code: engine.PathEscape, Path: p, Parameter: pa.Key,
				Message: fmt.Sprintf("argument %s (%q) starts with ~, which a tool may expand to the home directory, outside the workspace", pa.Key, p),
				Hint:    "give a path relative to the workspace root"}
		}
		if base != "" && !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		if isWorkspaceRoot(ws, p) {
			out = append(out, ".")
			continue
		}
		rel, err := ws.Canonical(p)
		if err != nil {
			if d, ok := engine.AsDenial(err); ok && d.Parameter == "" {
				d.Parameter = pa.Key
			}
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

func isWorkspaceRoot(ws *engine.Workspace, p string) bool {
	if p == "" {
		return true
	}
	if !filepath.IsAbs(p) {
		return filepath.Clean(p) == "."
	}
	return filepath.Clean(p) == filepath.Clean(ws.Dir)
}

// ArgsOf tells PathArgScope which calls it judges: for such a call, the
// arguments the tool itself receives and the directory it resolves relative
// paths in ("" for the workspace root). ok is false for other calls.
type ArgsOf func(c *engine.Call) (args json.RawMessage, base string, ok bool)

// PathArgScope holds the path arguments of external tools (MCP tools) to the
// rules of intentgate's own: every one must canonicalize inside the
// workspace; for a call that can change the workspace (reg.MutatingCall),
// every one must also be in the owned scope of the session's intent and
// neither a governance file nor matched by .intentignore. It runs after the
// gatekeeper, which has set c.Intent. Any error while deciding refuses.
func PathArgScope(reg *engine.Registry, ws *engine.Workspace, intents Intents, argsOf ArgsOf) engine.PreHook {
	ig := &ignoreCache{ws: ws}
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		args, base, ok := argsOf(c)
		if !ok {
			return nil
		}
		found, err := PathArgs(args)
		if err != nil {
			return &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool,
				Message: "the tool's arguments cannot be checked: " + err.Error(),
				Hint:    "send plain JSON arguments with relative paths inside the workspace"}
		}
		rels, err := CanonicalPathArgs(ws, base, found)
		if err != nil {
			return err
		}
		if !reg.MutatingCall(c) || len(rels) == 0 {
			return nil
		}
		in, err := currentIntent(c, intents, c.Intent)
		if err != nil {
			return err
		}
		m, err := ig.get()
		if err != nil {
			return err
		}
		for i, rel := range rels {
			if rel == "." {
				return &engine.Denial{Code: engine.ScopeViolation, Path: ".", Intent: in.ID, Parameter: found[i].Key,
					Message: fmt.Sprintf("argument %s names the whole workspace, which is outside the owned_scope of %s (%s)", found[i].Key, in.ID, strings.Join(in.OwnedScope, ", ")),
					Hint:    "name a file or directory inside the intent's scope"}
			}
			if orchestration.IsGoverned(rel) {
				return &engine.Denial{Code: engine.ProtectedPath, Path: rel, Parameter: found[i].Key,
					Message: fmt.Sprintf("%s (argument %s) is a governance file; no agent may change it under any intent", rel, found[i].Key),
					Hint:    "leave intentgate's files, git's and the agents' hook configuration to people"}
			}
			if m.Match(rel, false) {
				return &engine.Denial{Code: engine.ProtectedPath, Path: rel, Parameter: found[i].Key,
					Message: fmt.Sprintf("%s (argument %s) matches .intentignore; it may not be modified under any intent", rel, found[i].Key),
					Hint:    "choose another file, or ask a person to change .intentignore"}
			}
			if err := checkScope(in, rel); err != nil {
				return err
			}
		}
		return nil
	})
}
