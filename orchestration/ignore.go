package orchestration

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/internal/gitignore"
	"golang.org/x/text/unicode/norm"
)

// Ignore matches paths against .intentignore: gitignore syntax, paths that
// may not be modified under any intent.
//
// Matching is case-insensitive, like git with core.ignorecase: on macOS and
// Windows "Secrets/key" and "secrets/key" are the same file, and a deny list
// that a change of case walks around protects nothing. Patterns and paths are
// NFC-normalized for the same reason.
type Ignore struct {
	m gitignore.Matcher // nil matches nothing
}

// LoadIgnore reads .intentignore at the root of workspace. A missing file
// means nothing is ignored; any other read error is returned, so that callers
// fail closed.
func LoadIgnore(workspace string) (*Ignore, error) {
	data, err := os.ReadFile(filepath.Join(workspace, ".intentignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return ParseIgnore(nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("load .intentignore: %w", err)
	}
	return ParseIgnore(data), nil
}

// ParseIgnore parses the contents of an .intentignore file.
func ParseIgnore(data []byte) *Ignore {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var ps gitignore.Matcher
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, `\#`):
			// A literal leading "#"; the parser gives "#" no meaning.
			line = line[1:]
		case strings.HasPrefix(line, `\!`):
			// A literal leading "!". The parser would read a bare "!" as
			// negation, but "[!]" is a class holding just "!" in
			// filepath.Match, which negates classes with "^" only.
			line = "[!]" + line[2:]
		}
		ps = append(ps, gitignore.Parse(ignoreFold(line), nil))
	}
	return &Ignore{m: ps}
}

// Match reports whether rel, a slash-separated workspace-relative path, is
// ignored. As in git, a path is ignored when any of its parent directories
// is, and a negated pattern cannot bring back a file whose directory is
// excluded: "secrets/" covers "secrets/a/b.txt" whatever follows.
func (ig *Ignore) Match(rel string, isDir bool) bool {
	if ig == nil {
		return false
	}
	var parts []string
	for _, p := range strings.Split(ignoreFold(rel), "/") {
		if p != "" && p != "." {
			parts = append(parts, p)
		}
	}
	for i := 1; i <= len(parts); i++ {
		if ig.m.Match(parts[:i], i < len(parts) || isDir) {
			return true
		}
	}
	return false
}

func ignoreFold(s string) string {
	return strings.ToLower(norm.NFC.String(s))
}

// IsGoverned reports whether rel is one of the paths no agent may ever
// change: the governance files (.orchestration, .intentignore), git's own
// directory (at the root or in any nested repository), and the agents' hook
// configuration (.claude, .codex, .gemini, .cursor, .clinerules, .mcp.json).
//
// Names are compared the way the file systems that agents run on would
// resolve them: ignoring case, after NFC normalization, ignoring the code
// points HFS+ ignores, trailing dots and spaces and NTFS stream suffixes
// (".git::$INDEX_ALLOCATION" is ".git" on Windows), and with git's 8.3 short
// name "git~1". Erring towards protection costs a denial; erring the other
// way costs the ledger. For the same reason a path that still holds a ".."
// component is treated as governed: what it names is unknown until resolved.
func IsGoverned(rel string) bool {
	var parts []string
	for _, p := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' }) {
		if p == ".." {
			return true
		}
		if p != "." {
			parts = append(parts, ignoreGovName(p))
		}
	}
	if len(parts) == 0 {
		return false
	}
	switch parts[0] {
	case ".orchestration", ".intentignore", ".claude", ".codex", ".gemini", ".cursor", ".clinerules", ".cline", ".mcp.json":
		// The agents' hook, MCP and rule configuration: whoever changes
		// it changes what governs the agent.
		return true
	case ".roo":
		// Roo's MCP settings name commands that intentgate's MCP hub runs.
		if len(parts) > 1 && parts[1] == "mcp.json" {
			return true
		}
	}
	// .git and .orchestration at any depth: a nested repository's hooks run
	// as the user, and a nested .orchestration must never become the
	// governance of commands run from inside it.
	for _, p := range parts {
		switch p {
		case ".git", "git~1", ".orchestration", "orches~1":
			return true
		}
	}
	return false
}

// ignoreGovName reduces one path component to the name a case-insensitive,
// normalizing file system would open.
func ignoreGovName(c string) string {
	c = norm.NFC.String(c)
	c = strings.Map(func(r rune) rune {
		if ignoreHFSIgnorable(r) {
			return -1
		}
		return r
	}, c)
	if i := strings.IndexByte(c, ':'); i >= 0 {
		c = c[:i]
	}
	c = strings.TrimRight(c, " .")
	if c == "" {
		// "..." and friends trim to nothing; keep them distinct from real names.
		return "."
	}
	return strings.ToLower(c)
}

// ignoreHFSIgnorable reports the code points HFS+ drops when comparing names
// (the list git uses to refuse ".g\u200cit").
func ignoreHFSIgnorable(r rune) bool {
	switch {
	case r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f,
		0x202a <= r && r <= 0x202e,
		0x206a <= r && r <= 0x206f,
		r == 0xfeff:
		return true
	}
	return false
}
