// Package gitignore matches paths against gitignore patterns, as
// .intentignore and the workspace pictures read them. Its rules are those
// intentgate has always applied (go-git's gitignore package, which a test
// compares it with on random patterns and paths); it exists so that a hook
// process matches without linking a git library.
//
// A path is its components, slash-separated in the file ("src/a.go" is
// ["src", "a.go"]). A pattern is one line: "!" negates it, a trailing "/"
// limits it to directories, and one holding a "/" elsewhere is matched
// component by component from the start of its domain ("**" spans any
// number of directories), while one without matches any single component.
// A pattern that matches a directory matches everything below it.
package gitignore

import (
	"path/filepath"
	"strings"
)

// Result is what one pattern says of a path.
type Result int

const (
	NoMatch Result = iota // the pattern says nothing
	Exclude               // the path is ignored
	Include               // the path is brought back (a "!" pattern)
)

// Pattern is one parsed gitignore line.
type Pattern struct {
	domain   []string // the directory of the file the line came from
	segs     []string // the pattern, split at "/"
	negate   bool
	dirOnly  bool
	hasSlash bool
}

// Parse parses one line (without its newline; comments and blank lines are
// the caller's to skip) read from a file in the directory domain.
func Parse(line string, domain []string) Pattern {
	p := Pattern{domain: append([]string(nil), domain...)}
	if rest, ok := strings.CutPrefix(line, "!"); ok {
		p.negate, line = true, rest
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " ")
	}
	if rest, ok := strings.CutSuffix(line, "/"); ok {
		p.dirOnly, line = true, rest
	}
	p.hasSlash = strings.Contains(line, "/")
	p.segs = strings.Split(line, "/")
	return p
}

// Match says what p says of path, a directory when isDir.
func (p Pattern) Match(path []string, isDir bool) Result {
	if len(path) <= len(p.domain) {
		return NoMatch
	}
	for i, d := range p.domain {
		if path[i] != d {
			return NoMatch
		}
	}
	rest := path[len(p.domain):]
	var hit bool
	if p.hasSlash {
		hit = p.matchSegments(rest, isDir)
	} else {
		hit = p.matchAnyName(rest, isDir)
	}
	switch {
	case !hit:
		return NoMatch
	case p.negate:
		return Include
	}
	return Exclude
}

// matchAnyName: a pattern without "/" names any one component, the first
// that matches deciding (a directory-only pattern never names the path's
// last component unless the path is a directory).
func (p Pattern) matchAnyName(path []string, isDir bool) bool {
	for i, name := range path {
		ok, err := filepath.Match(p.segs[0], name)
		if err != nil {
			return false
		}
		if ok {
			return !(p.dirOnly && !isDir && i == len(path)-1)
		}
	}
	return false
}

// matchSegments matches the pattern's components in order from the start
// of path; after "**" the next one may match any later component.
func (p Pattern) matchSegments(path []string, isDir bool) bool {
	hit, floating := false, false
	for i, seg := range p.segs {
		if seg == "" {
			floating = false
			continue
		}
		if seg == "**" {
			if i == len(p.segs)-1 {
				break
			}
			floating = true
			continue
		}
		if strings.Contains(seg, "**") || len(path) == 0 {
			return false
		}
		if !floating {
			ok, err := filepath.Match(seg, path[0])
			if err != nil || !ok {
				return false
			}
			hit, path = true, path[1:]
			continue
		}
		floating, hit = false, false
		for len(path) > 0 {
			ok, err := filepath.Match(seg, path[0])
			path = path[1:]
			if err != nil {
				return false
			}
			if ok {
				hit = true
				break
			}
		}
	}
	if hit && p.dirOnly && !isDir && len(path) == 0 {
		return false
	}
	return hit
}

// Matcher is a list of patterns, later ones overriding earlier ones.
type Matcher []Pattern

// Match reports whether path is ignored: the last pattern that says
// anything of it decides.
func (m Matcher) Match(path []string, isDir bool) bool {
	for i := len(m) - 1; i >= 0; i-- {
		if r := m[i].Match(path, isDir); r != NoMatch {
			return r == Exclude
		}
	}
	return false
}
