package tools

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/intentgate/intentgate/engine"
)

// The limits of search_files, Roo Code's (src/services/ripgrep/index.ts).
const (
	maxSearchResults = 300
	maxSearchLineLen = 500
)

// SearchFiles is search_files(path, regex, file_pattern?): the lines of the
// files under path that match regex, each with one line of context before
// and after, grouped by file as Roo Code prints ripgrep's results:
//
//	Found 2 results.
//
//	# src/a.go
//	  3 | func a() {
//	  4 | 	return b()
//	  5 | }
//	----
//
// The regex is RE2 syntax, which is ripgrep's (Rust) syntax save for the
// Unicode meaning of \d, \w, \s and \b, ASCII here. As ripgrep does, the
// search skips hidden and .gitignore'd files and directories and binary
// files, and matches line by line.
func SearchFiles() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		dir, err := DirTarget(c)
		if err != nil {
			return nil, err
		}
		expr, err := c.Require("regex")
		if err != nil {
			return nil, err
		}
		if expr == "" {
			return nil, &engine.Denial{Code: engine.MissingParameter, Parameter: "regex",
				Message: "search_files needs a non-empty \"regex\"", Hint: "give the pattern to look for"}
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "regex",
				Message: fmt.Sprintf("regex %q is not valid RE2 syntax: %v", expr, err),
				Hint:    "fix the pattern; lookaround and backreferences are not supported"}
		}
		glob, _, err := c.String("file_pattern")
		if err != nil {
			return nil, err
		}
		match, err := globMatcher(glob)
		if err != nil {
			return nil, err
		}
		var isFile bool
		if dir != "" {
			fi, err := c.WS.Stat(dir)
			if err != nil {
				return nil, fmt.Errorf("search %s: %w", dir, unwrapPath(err))
			}
			isFile = !fi.IsDir()
		}
		t, err := openTree(c)
		if err != nil {
			return nil, err
		}
		defer t.close()
		s := &searcher{c: c, re: re}
		if isFile {
			s.file(dir)
		} else if err := s.walk(ctx, t, dir, match); err != nil {
			return nil, err
		}
		return &engine.Result{Output: s.format()}, nil
	})
}

// globMatcher is ripgrep's --glob: a pattern without "/" matches a file's
// name at any depth, one with "/" the path below the searched directory; a
// leading "!" excludes instead.
func globMatcher(glob string) (func(name, rel string) bool, error) {
	glob = strings.TrimSpace(glob)
	if glob == "" || glob == "*" {
		return func(string, string) bool { return true }, nil
	}
	neg := strings.HasPrefix(glob, "!")
	glob = strings.TrimPrefix(strings.TrimPrefix(glob, "!"), "/")
	if !doublestar.ValidatePattern(glob) {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Parameter: "file_pattern",
			Message: fmt.Sprintf("file_pattern %q is not a valid glob", glob),
			Hint:    "use a glob such as *.ts or src/**/*.go"}
	}
	byName := !strings.Contains(glob, "/")
	return func(name, rel string) bool {
		subject := rel
		if byName {
			subject = name
		}
		ok, _ := doublestar.Match(glob, subject)
		return ok != neg
	}, nil
}

type searchLine struct {
	n     int
	text  string
	match bool
}

type searchFile struct {
	path   string
	groups [][]searchLine
}

type searcher struct {
	c       *engine.Call
	re      *regexp.Regexp
	files   []searchFile
	results int
	full    bool
}

// walk searches dir depth first in path order, as ripgrep with --sort path.
func (s *searcher) walk(ctx context.Context, t *tree, dir string, match func(name, rel string) bool) error {
	ps := t.ignoresAbove(dir)
	var visit func(rel string, ps []ignorePattern) error
	visit = func(rel string, ps []ignorePattern) error {
		ents, err := t.readDir(rel)
		if err != nil && rel == dir {
			return fmt.Errorf("search %s: %w", displayDir(dir), unwrapPath(err))
		}
		for _, e := range ents {
			if s.full {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			name := e.Name()
			child := joinRel(rel, name)
			if isHidden(name) {
				continue
			}
			if entryIsDir(e) {
				if !ignoredEntry(ps, child, true) {
					if err := visit(child, t.within(ps, child)); err != nil {
						return err
					}
				}
				continue
			}
			if !e.Type().IsRegular() || ignoredEntry(ps, child, false) {
				continue
			}
			below := strings.TrimPrefix(strings.TrimPrefix(child, dir), "/")
			if match(name, below) {
				s.walked(t, child)
			}
		}
		return nil
	}
	return visit(dir, ps)
}

// walked searches a file met during the walk, read through its
// directory's handle.
func (s *searcher) walked(t *tree, rel string) {
	if s.full {
		return
	}
	if b, ok := t.readFile(rel, maxReadBytes); ok {
		s.search(rel, b)
	}
}

// file searches one file. Files that cannot be read safely (links, hard
// links, files too large) and binary files are skipped, as ripgrep skips
// what it cannot search.
func (s *searcher) file(rel string) {
	if s.full {
		return
	}
	if fi, err := s.c.WS.Stat(rel); err != nil || fi.Size() > maxReadBytes || !fi.Mode().IsRegular() {
		return
	}
	b, err := s.c.WS.ReadFile(rel)
	if err != nil {
		return
	}
	s.search(rel, b)
}

func (s *searcher) search(rel string, b []byte) {
	if bytes.IndexByte(b, 0) >= 0 {
		return
	}
	lines := SplitLines(b)
	var f searchFile
	last := 0 // last line number added to the current group
	add := func(n int, isMatch bool) {
		l := searchLine{n: n, text: strings.TrimSuffix(lines[n-1], "\r"), match: isMatch}
		if g := len(f.groups); g > 0 && n <= last+1 {
			if grp := f.groups[g-1]; n <= last {
				if isMatch {
					grp[n-grp[0].n].match = true
				}
				return
			}
			f.groups[g-1] = append(f.groups[g-1], l)
		} else {
			if s.results >= maxSearchResults {
				s.full = true
				return
			}
			s.results++
			f.groups = append(f.groups, []searchLine{l})
		}
		last = n
	}
	for i, line := range lines {
		if !s.re.MatchString(strings.TrimSuffix(line, "\r")) {
			continue
		}
		n := i + 1
		if n > 1 {
			add(n-1, false)
		}
		add(n, true)
		if n < len(lines) {
			add(n+1, false)
		}
		if s.full {
			break
		}
	}
	if len(f.groups) > 0 {
		f.path = rel
		s.files = append(s.files, f)
	}
}

func (s *searcher) format() string {
	var b strings.Builder
	if s.full || s.results >= maxSearchResults {
		fmt.Fprintf(&b, "Showing first %d of %d+ results. Use a more specific search if necessary.\n\n", maxSearchResults, maxSearchResults)
	} else if s.results == 1 {
		b.WriteString("Found 1 result.\n\n")
	} else {
		fmt.Fprintf(&b, "Found %s results.\n\n", thousands(s.results))
	}
	for _, f := range s.files {
		fmt.Fprintf(&b, "# %s\n", f.path)
		for _, g := range f.groups {
			for _, l := range g {
				fmt.Fprintf(&b, "%3d | %s\n", l.n, strings.TrimRightFunc(truncateLine(l.text), isTrimSpace))
			}
			b.WriteString("----\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}

// truncateLine shortens a line longer than maxSearchLineLen characters.
func truncateLine(s string) string {
	if utf8.RuneCountInString(s) <= maxSearchLineLen {
		return s
	}
	r := []rune(s)
	return string(r[:maxSearchLineLen]) + " [truncated...]"
}

// thousands writes n with comma separators, as toLocaleString does in English.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// isTrimSpace is what JavaScript's trim removes.
func isTrimSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }
