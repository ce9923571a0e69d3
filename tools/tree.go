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
//
// Directories are opened from their parent's handle, one component at a
// time, and the handles of the most recently used ones are kept: a walk
// opens each directory once, at a cost independent of its depth, where
// opening every directory by its path from the root would cost the whole
// path each time (quadratic in depth).
type tree struct {
	root     *os.Root
	noIgnore bool
	dirs     map[string]*openDir
	clock    int
}

type openDir struct {
	r    *os.Root
	used int
}

// maxOpenDirs bounds the directory handles a walk keeps open.
const maxOpenDirs = 64

func openTree(c *engine.Call) (*tree, error) {
	if c.WS == nil {
		return nil, errors.New("call has no workspace")
	}
	r, err := os.OpenRoot(c.WS.Dir)
	if err != nil {
		return nil, err
	}
	return &tree{root: r, dirs: map[string]*openDir{}}, nil
}

func (t *tree) close() {
	for _, d := range t.dirs {
		d.r.Close()
	}
	t.dirs = nil
	t.root.Close()
}

// dir returns a handle on directory rel ("" for the root), valid until the
// next call of dir or close. It is opened from its parent's handle, so a
// component swapped for a symlink cannot lead out of the parent.
func (t *tree) dir(rel string) (*os.Root, error) {
	if rel == "" {
		return t.root, nil
	}
	t.clock++
	if d, ok := t.dirs[rel]; ok {
		d.used = t.clock
		return d.r, nil
	}
	parentRel, name := rel, rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parentRel, name = rel[:i], rel[i+1:]
	} else {
		parentRel = ""
	}
	parent, err := t.dir(parentRel)
	if err != nil {
		return nil, err
	}
	r, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if len(t.dirs) >= maxOpenDirs {
		oldest := ""
		for k, d := range t.dirs {
			if oldest == "" || d.used < t.dirs[oldest].used {
				oldest = k
			}
		}
		t.dirs[oldest].r.Close()
		delete(t.dirs, oldest)
	}
	t.clock++
	t.dirs[rel] = &openDir{r: r, used: t.clock}
	return r, nil
}

// readDir lists directory rel, sorted by name.
func (t *tree) readDir(rel string) ([]fs.DirEntry, error) {
	d, err := t.dir(rel)
	if err != nil {
		return nil, err
	}
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// readFile reads the regular file rel (a file of a directory the walk
// reached) through its directory's handle, with the workspace's checks: not
// a link, not a special file, not larger than max.
func (t *tree) readFile(rel string, max int64) ([]byte, bool) {
	dirRel, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dirRel, name = rel[:i], rel[i+1:]
	}
	d, err := t.dir(dirRel)
	if err != nil {
		return nil, false
	}
	if fi, err := d.Lstat(name); err != nil || fi.Size() > max || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := engine.ReadFileIn(d, rel, name)
	return b, err == nil
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

// ignorePattern is one .gitignore line. A pattern that names an entry at
// any depth (no "/" but a trailing one, or only a leading "**/") is also
// kept without its domain, to be matched on an entry's name alone: during a
// walk, which never enters an ignored directory and carries only the
// patterns of the directories above, that is git's rule, at a cost
// independent of the entry's depth.
type ignorePattern struct {
	full gitignore.Pattern
	name gitignore.Pattern // nil for a pattern with a path
}

// gitignoreAt reads the patterns of dir/.gitignore.
func (t *tree) gitignoreAt(dir string) []ignorePattern {
	if t.noIgnore {
		return nil
	}
	d, err := t.dir(dir)
	if err != nil {
		return nil
	}
	b, err := d.ReadFile(".gitignore")
	if err != nil {
		return nil
	}
	return parseGitignore(b, splitParts(dir))
}

func parseGitignore(b []byte, domain []string) []ignorePattern {
	var ps []ignorePattern
	for _, line := range strings.Split(strings.TrimPrefix(string(b), "\ufeff"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := ignorePattern{full: gitignore.ParsePattern(line, domain)}
		neg, body := "", line
		if strings.HasPrefix(body, "!") {
			neg, body = "!", body[1:]
		}
		body = strings.TrimPrefix(body, "**/")
		if body != "" && !strings.Contains(strings.TrimSuffix(body, "/"), "/") && !strings.Contains(body, "**") {
			p.name = gitignore.ParsePattern(neg+body, nil)
		}
		ps = append(ps, p)
	}
	return ps
}

// ignoresAbove returns the patterns in force inside directory rel: git's
// info/exclude and every .gitignore from the workspace root down to rel.
func (t *tree) ignoresAbove(rel string) []ignorePattern {
	if t.noIgnore {
		return nil
	}
	var ps []ignorePattern
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

// ignored reports whether patterns ps exclude the workspace path rel, by
// git's rule for any path (a pattern matching a directory above it counts).
func ignored(ps []ignorePattern, rel string, isDir bool) bool {
	if len(ps) == 0 || rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := len(ps) - 1; i >= 0; i-- {
		if r := ps[i].full.Match(parts, isDir); r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

// ignoredEntry reports whether ps exclude entry rel met during a walk: its
// directory was not ignored, and ps are the patterns of the directories
// above it.
func ignoredEntry(ps []ignorePattern, rel string, isDir bool) bool {
	if len(ps) == 0 || rel == "" {
		return false
	}
	name := []string{rel[strings.LastIndexByte(rel, '/')+1:]}
	var parts []string
	for i := len(ps) - 1; i >= 0; i-- {
		var r gitignore.MatchResult
		if ps[i].name != nil {
			r = ps[i].name.Match(name, isDir)
		} else {
			if parts == nil {
				parts = strings.Split(rel, "/")
			}
			r = ps[i].full.Match(parts, isDir)
		}
		if r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

// within adds dir's own .gitignore to the patterns of its parent, without
// disturbing the parent's slice, which its other children share.
func (t *tree) within(ps []ignorePattern, dir string) []ignorePattern {
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
