package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/intentgate/intentgate/engine"
)

// DirTarget resolves the "path" argument of a tool that takes a directory
// (or either a directory or a file): "." and "" name the workspace root, a
// trailing "/" or "/." is allowed, and anything else is canonicalized like
// a file path, so it cannot leave the workspace. rel is "" for the root.
func DirTarget(c *engine.Call) (rel string, err error) {
	p, ok, err := c.String("path")
	if err != nil {
		return "", err
	}
	if !ok {
		_, err := c.Require("path")
		return "", err
	}
	p = dirPath(p)
	if p == "" || p == "." || p == "./" {
		return "", nil
	}
	if c.WS == nil {
		return "", errors.New("call has no workspace")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		// The workspace root spelled absolutely, possibly through a
		// symlink: canonicalize a name inside it and see what is left.
		const probe = ".intentgate-dir-probe"
		if r, err := c.WS.Canonical(filepath.Join(p, probe)); err == nil && r == probe {
			return "", nil
		}
	}
	rel, err = c.WS.Canonical(p)
	if d, isDenial := engine.AsDenial(err); isDenial && d.Tool == "" {
		d.Tool = c.Tool
	}
	return rel, err
}

// defaultIgnoredDirs are the directories Roo Code's list_files leaves out
// (src/services/glob/constants.ts DIRS_TO_IGNORE, without ".*", which is
// handled as hidden directories): dependencies, build output, caches.
var defaultIgnoredDirs = []string{"node_modules", "__pycache__", "env", "venv", "dist", "out",
	"bundle", "vendor", "tmp", "temp", "deps", "pkg", "Pods", ".git"}

// defaultIgnoredPaths are DIRS_TO_IGNORE's two-component entries, left out
// at any depth.
var defaultIgnoredPaths = []string{"target/dependency", "build/dependencies"}

func isDefaultIgnored(rel, name string, except string) bool {
	if name != except && slices.Contains(defaultIgnoredDirs, name) {
		return true
	}
	for _, p := range defaultIgnoredPaths {
		if rel == p || strings.HasSuffix(rel, "/"+p) {
			return true
		}
	}
	return false
}

// tree reads a workspace's directories through os.Root, so that no symlink
// leads a listing or a search out of it, and knows the .gitignore files that
// apply in them.
type tree struct {
	root     *os.Root
	noIgnore bool
}

func openTree(c *engine.Call) (*tree, error) {
	if c.WS == nil {
		return nil, errors.New("call has no workspace")
	}
	r, err := os.OpenRoot(c.WS.Dir)
	if err != nil {
		return nil, err
	}
	return &tree{root: r}, nil
}

func (t *tree) close() { t.root.Close() }

func osName(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

// readDir lists directory rel, sorted by name.
func (t *tree) readDir(rel string) ([]fs.DirEntry, error) {
	f, err := t.root.Open(osName(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func splitParts(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// gitignoreAt reads the patterns of dir/.gitignore.
func (t *tree) gitignoreAt(dir string) []gitignore.Pattern {
	if t.noIgnore {
		return nil
	}
	b, err := t.root.ReadFile(osName(joinRel(dir, ".gitignore")))
	if err != nil {
		return nil
	}
	return parseGitignore(b, splitParts(dir))
}

func parseGitignore(b []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(strings.TrimPrefix(string(b), "\ufeff"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// ignoresAbove returns the patterns in force inside directory rel: git's
// info/exclude and every .gitignore from the workspace root down to rel.
func (t *tree) ignoresAbove(rel string) []gitignore.Pattern {
	if t.noIgnore {
		return nil
	}
	var ps []gitignore.Pattern
	if b, err := t.root.ReadFile(filepath.Join(".git", "info", "exclude")); err == nil {
		ps = parseGitignore(b, nil)
	}
	ps = append(ps, t.gitignoreAt("")...)
	parts := splitParts(rel)
	for i := range parts {
		ps = append(ps, t.gitignoreAt(strings.Join(parts[:i+1], "/"))...)
	}
	return ps
}

// ignored reports whether patterns ps exclude the workspace path rel.
func ignored(ps []gitignore.Pattern, rel string, isDir bool) bool {
	if len(ps) == 0 || rel == "" {
		return false
	}
	return gitignore.NewMatcher(ps).Match(strings.Split(rel, "/"), isDir)
}

// within adds dir's own .gitignore to the patterns of its parent, without
// disturbing the parent's slice, which its other children share.
func (t *tree) within(ps []gitignore.Pattern, dir string) []gitignore.Pattern {
	more := t.gitignoreAt(dir)
	if len(more) == 0 {
		return ps
	}
	return append(slices.Clip(ps), more...)
}

// isHidden reports a dot file or directory.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// entryIsDir reports a real directory; a symlink is never followed, so a
// link to a directory is listed as a name of its own.
func entryIsDir(e fs.DirEntry) bool { return e.IsDir() && e.Type()&fs.ModeSymlink == 0 }
