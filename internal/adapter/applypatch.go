package adapter

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// PatchOps lists what an apply_patch body does, file by file, reading it
// the way Codex's own parser does (codex-rs/apply-patch, lenient mode), so
// that every file Codex would touch is named here:
//
//	*** Begin Patch
//	*** Add File: <path>       (followed by "+" lines: the new file)
//	*** Delete File: <path>
//	*** Update File: <path>    (optionally "*** Move to: <path>", then chunks)
//	*** End Patch
//
// The facts of that parser this follows:
//   - the body is trimmed of Unicode white space and split into lines at
//     "\n", a "\r" before it dropped; the first line, trimmed, must be
//     "*** Begin Patch" and the last "*** End Patch" (or the whole is wrapped
//     in a <<EOF heredoc of at least four lines);
//   - a file header is a line that, trimmed of Unicode white space on both
//     sides (tab, NBSP, U+3000...), starts with the marker: an indented
//     header counts; the path is the rest of the line, not trimmed further;
//   - "*** Move to: " counts only at the very start of the line after an
//     Update header;
//   - inside an Update, a line that starts with ' ', '+' or '-' (or is empty)
//     belongs to the chunk, "@@" lines open chunks, blank lines are skipped,
//     and a line starting with '*' or any other character ends the file's
//     chunks: the next header is read from it, trimmed.
//
// Anything Codex would reject (a header it does not know, an Update without
// chunks, no end marker) is an error here too: the call is refused rather
// than guessed at. A move is a delete of the old path and a write of the new.
// The hunks themselves are not applied: the engine reads the files before
// and after.
func PatchOps(body string) ([]Op, error) {
	if cmd, dir, ok := shellPatch(body); ok {
		ops, err := parsePatch(cmd)
		if err != nil {
			return nil, err
		}
		if dir != "" {
			for i := range ops {
				if !isAbsAny(ops[i].Path) {
					ops[i].Path = path.Join(dir, ops[i].Path)
				}
			}
		}
		return ops, nil
	}
	return parsePatch(body)
}

// shellPatch recognises the shell forms Codex runs as a patch rather than as
// a command: `apply_patch <<'EOF' ... EOF` (or applypatch, any quoting of the
// delimiter), optionally after `cd DIR &&`. It returns the heredoc's body
// and the directory.
var shellPatchRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^\s*(?:cd\s+('[^']*'|"[^"]*"|[^\s;&|'"]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)[ \t]*\r?\n(.*)$`)
})

func shellPatch(s string) (body, dir string, ok bool) {
	m := shellPatchRe().FindStringSubmatch(s)
	if m == nil || m[2] != m[4] {
		return "", "", false
	}
	rest := strings.TrimRightFunc(m[5], unicode.IsSpace)
	delim := m[3]
	i := strings.LastIndex(rest, "\n")
	last := rest[i+1:]
	if strings.TrimSpace(last) != delim {
		return "", "", false
	}
	body = rest[:max(i, 0)]
	dir = strings.Trim(m[1], `'"`)
	return body, dir, true
}

func isAbsAny(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 2 && p[1] == ':')
}

const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

func trimU(s string) string { return strings.TrimFunc(s, unicode.IsSpace) }

// rustLines splits like Rust's str::lines: at "\n", dropping one "\r"
// before it, with no empty last line for a trailing newline.
func rustLines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		parts[i] = strings.TrimSuffix(p, "\r")
	}
	return parts
}

func parsePatch(body string) ([]Op, error) {
	lines := rustLines(trimU(body))
	inner, err := patchBoundaries(lines)
	if err != nil {
		// Codex's lenient mode: a <<EOF heredoc around the patch itself.
		if len(lines) >= 4 && (lines[0] == "<<EOF" || lines[0] == "<<'EOF'" || lines[0] == `<<"EOF"`) &&
			strings.HasSuffix(lines[len(lines)-1], "EOF") {
			inner, err = patchBoundaries(lines[1 : len(lines)-1])
		}
		if err != nil {
			return nil, err
		}
	}
	var ops []Op
	lineNo := 2
	for len(inner) > 0 {
		got, n, err := patchHunk(inner, lineNo)
		if err != nil {
			return nil, err
		}
		ops = append(ops, got...)
		inner = inner[n:]
		lineNo += n
	}
	return ops, nil
}

func patchBoundaries(lines []string) ([]string, error) {
	if len(lines) == 0 || trimU(lines[0]) != patchBegin {
		return nil, errors.New(`apply_patch: the first line of the patch must be "*** Begin Patch"`)
	}
	if len(lines) < 2 || trimU(lines[len(lines)-1]) != patchEnd {
		return nil, errors.New(`apply_patch: the last line of the patch must be "*** End Patch"`)
	}
	return lines[1 : len(lines)-1], nil
}

// patchHunk reads one file's header and body from the start of lines.
func patchHunk(lines []string, lineNo int) ([]Op, int, error) {
	first := trimU(lines[0])
	if p, ok := strings.CutPrefix(first, patchAdd); ok {
		n := 1
		var content strings.Builder
		for _, l := range lines[1:] {
			s, ok := strings.CutPrefix(l, "+")
			if !ok {
				break
			}
			content.WriteString(s + "\n")
			n++
		}
		if err := patchPath(p, lineNo); err != nil {
			return nil, 0, err
		}
		return []Op{{Kind: OpWrite, Path: p, Content: content.String(), HasContent: true}}, n, nil
	}
	if p, ok := strings.CutPrefix(first, patchDelete); ok {
		if err := patchPath(p, lineNo); err != nil {
			return nil, 0, err
		}
		return []Op{{Kind: OpDelete, Path: p}}, 1, nil
	}
	p, ok := strings.CutPrefix(first, patchUpdate)
	if !ok {
		return nil, 0, fmt.Errorf("apply_patch: line %d: %q is not a valid file header (*** Add File:, *** Delete File:, *** Update File:)", lineNo, first)
	}
	if err := patchPath(p, lineNo); err != nil {
		return nil, 0, err
	}
	rest, n := lines[1:], 1
	move := ""
	if len(rest) > 0 {
		if m, ok := strings.CutPrefix(rest[0], patchMove); ok {
			if err := patchPath(m, lineNo+1); err != nil {
				return nil, 0, err
			}
			move = m
			rest, n = rest[1:], n+1
		}
	}
	chunks := 0
	for len(rest) > 0 {
		if trimU(rest[0]) == "" {
			rest, n = rest[1:], n+1
			continue
		}
		if strings.HasPrefix(rest[0], "*") {
			break
		}
		c, err := patchChunk(rest, lineNo+n, chunks == 0)
		if err != nil {
			return nil, 0, err
		}
		chunks++
		rest, n = rest[c:], n+c
	}
	if chunks == 0 {
		return nil, 0, fmt.Errorf("apply_patch: line %d: the update of %q has no chunks", lineNo, p)
	}
	if move != "" {
		return []Op{{Kind: OpDelete, Path: p}, {Kind: OpWrite, Path: move}}, n, nil
	}
	return []Op{{Kind: OpEdit, Path: p}}, n, nil
}

// patchChunk returns how many lines one chunk of an Update takes.
func patchChunk(lines []string, lineNo int, first bool) (int, error) {
	start := 0
	switch {
	case lines[0] == "@@", strings.HasPrefix(lines[0], "@@ "):
		start = 1
	case !first:
		return 0, fmt.Errorf("apply_patch: line %d: a chunk must start with @@, not %q", lineNo, lines[0])
	}
	if start >= len(lines) {
		return 0, fmt.Errorf("apply_patch: line %d: an empty chunk", lineNo+1)
	}
	n := 0
	for _, l := range lines[start:] {
		if l == patchEOF {
			if n == 0 {
				return 0, fmt.Errorf("apply_patch: line %d: an empty chunk", lineNo+1)
			}
			n++
			break
		}
		if l != "" && l[0] != ' ' && l[0] != '+' && l[0] != '-' {
			if n == 0 {
				return 0, fmt.Errorf("apply_patch: line %d: %q is not a chunk line (' ', '+' or '-')", lineNo+1, l)
			}
			break
		}
		n++
	}
	return n + start, nil
}

// patchPath refuses a header whose path Codex would take but intentgate
// cannot check as named: none at all.
func patchPath(p string, lineNo int) error {
	if p == "" {
		return fmt.Errorf("apply_patch: line %d: a file header names no path", lineNo)
	}
	return nil
}
