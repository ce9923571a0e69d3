package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/intentgate/intentgate/engine"
)

// errUnchanged aborts an edit whose result equals the file: nothing is
// written and nothing is recorded.
var errUnchanged = errors.New("no change")

// InsertContent is insert_content(path, line, content). As in Roo Code the
// file is split on "\n" and the content's lines go in before line (1-based);
// line 0 appends them after the last piece, so appending to a file that ends
// with a newline leaves an empty line before them. A file that does not exist
// is created when line is 0 or 1. A file that ended with a newline still
// does, and inserted lines take the file's line ending.
func InsertContent() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		rel, err := editTarget(c)
		if err != nil {
			return nil, err
		}
		lineArg, err := c.Require("line")
		if err != nil {
			return nil, err
		}
		line, ok := wholeNumber(lineArg)
		if !ok || line < 0 {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "line",
				Message: fmt.Sprintf("invalid line number %q: it must be a non-negative integer", lineArg),
				Hint:    "give the 1-based line to insert before, or 0 to append at the end of the file"}
		}
		content, ok, err := c.String("content")
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("content")
			return nil, err
		}
		exists, err := fileExists(c, rel)
		if err != nil {
			return nil, err
		}
		notThere := func() error {
			return &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "line",
				Message: fmt.Sprintf("cannot insert at line %d of %s, which does not exist", line, rel),
				Hint:    "for a new file, line must be 0 (append) or 1 (insert at the beginning)"}
		}
		if !exists && line > 1 {
			return nil, notThere()
		}
		ch, err := c.WS.Edit(c, rel, func(before []byte, existed bool) ([]byte, error) {
			if !existed && line > 1 {
				return nil, notThere()
			}
			after := insertLines(before, existed, line, content)
			if existed && bytes.Equal(after, before) {
				return nil, errUnchanged
			}
			return after, nil
		})
		switch {
		case errors.Is(err, errUnchanged):
			return &engine.Result{Output: fmt.Sprintf("No changes needed for '%s'.", rel)}, nil
		case err != nil:
			return nil, editError(rel, err)
		}
		var msg string
		switch {
		case !ch.Existed:
			msg = fmt.Sprintf("The file %s was created with the content.", rel)
		case line == 0:
			msg = fmt.Sprintf("The content was appended to %s.", rel)
		default:
			msg = fmt.Sprintf("The content was inserted in %s before line %d.", rel, line)
		}
		return &engine.Result{Output: msg, Changes: []engine.FileChange{ch}}, nil
	})
}

// insertLines is Roo Code's insertGroups(before.split("\n"), [{index:
// line-1, elements: content.split("\n")}]).join("\n"), with an editor's
// handling of line endings: inserted lines take the file's line ending, and
// a file that ended with a newline keeps one.
func insertLines(before []byte, existed bool, line int, content string) []byte {
	text := string(before)
	eol := dominantEOL(before)
	type piece struct {
		s string
		// own: the piece had no line break after it in the file, so one
		// added now must be written in the file's line ending.
		own bool
	}
	var orig []piece
	if existed {
		parts := strings.Split(text, "\n")
		for i, p := range parts {
			orig = append(orig, piece{s: p, own: i == len(parts)-1})
		}
	}
	var ins []piece
	for _, p := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		ins = append(ins, piece{s: p, own: true})
	}
	var out []piece
	if idx := line - 1; idx < 0 {
		out = append(append(out, orig...), ins...)
	} else {
		idx = min(idx, len(orig))
		out = append(append(append(out, orig[:idx]...), ins...), orig[idx:]...)
	}
	var b strings.Builder
	for i, p := range out {
		b.WriteString(p.s)
		if i == len(out)-1 {
			break
		}
		if p.own && eol == "\r\n" && !strings.HasSuffix(p.s, "\r") {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	s := b.String()
	if strings.HasSuffix(text, "\n") && !strings.HasSuffix(s, "\n") {
		s += eol
	}
	return []byte(s)
}

// dominantEOL is the line ending an editor gives a file: CRLF when more than
// half of its line breaks are CRLF (VS Code's rule), LF otherwise.
func dominantEOL(b []byte) string {
	lf := bytes.Count(b, []byte("\n"))
	if lf > 0 && 2*bytes.Count(b, []byte("\r\n")) > lf {
		return "\r\n"
	}
	return "\n"
}

// SearchAndReplace is search_and_replace(path, search, replace, use_regex?,
// ignore_case?, start_line?, end_line?), Roo Code's: every match is replaced,
// in the whole file or in the given lines only. The search is a JavaScript
// regular expression, or with use_regex unset the literal text (escaped into
// one, as Roo Code does, so that $&, $` and $' still work in replace), and
// replace follows String.prototype.replace: $&, $1..$99, $<name>, $`, $'
// and $$.
func SearchAndReplace() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		rel, err := editTarget(c)
		if err != nil {
			return nil, err
		}
		search, err := c.Require("search")
		if err != nil {
			return nil, err
		}
		if search == "" {
			return nil, &engine.Denial{Code: engine.MissingParameter, Path: rel, Parameter: "search",
				Message: "search_and_replace needs a non-empty \"search\"",
				Hint:    "give the text, or with use_regex the pattern, to look for"}
		}
		replace, ok, err := c.String("replace")
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("replace")
			return nil, err
		}
		useRegex, err := boolArg(c, "use_regex")
		if err != nil {
			return nil, err
		}
		ignoreCase, err := boolArg(c, "ignore_case")
		if err != nil {
			return nil, err
		}
		start, hasStart, err := optInt(c, "start_line")
		if err != nil {
			return nil, err
		}
		end, hasEnd, err := optInt(c, "end_line")
		if err != nil {
			return nil, err
		}
		if hasStart && hasEnd && end < start {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "end_line",
				Message: fmt.Sprintf("end_line %d is before start_line %d", end, start),
				Hint:    "give a range whose end_line is not before its start_line"}
		}
		pattern := search
		if !useRegex {
			pattern = jsEscape(search)
		}
		re, err := compileJS(pattern, ignoreCase)
		if err != nil {
			var se *jsSyntaxError
			hint := "fix the pattern, or set use_regex to false to search for the text as it is"
			if errors.As(err, &se) && se.unsupported {
				hint = "rewrite the pattern without lookaround, backreferences or modifier groups, or search for literal text"
			}
			return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "search",
				Message: fmt.Sprintf("search %q cannot be used as a regular expression: %v", search, err), Hint: hint}
		}
		exists, err := fileExists(c, rel)
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, fmt.Errorf("%s does not exist; search_and_replace changes existing files only (create one with write_to_file)", rel)
		}
		count := 0
		ch, err := c.WS.Edit(c, rel, func(before []byte, existed bool) ([]byte, error) {
			if !existed {
				return nil, fmt.Errorf("%s does not exist", rel)
			}
			text := string(before)
			eol := dominantEOL(before)
			var after string
			if hasStart || hasEnd {
				lines := strings.Split(text, "\n")
				s := 0
				if hasStart {
					s = max(start-1, 0)
				}
				e := len(lines) - 1
				if hasEnd {
					e = min(max(end-1, 0), e)
				}
				if s > e {
					return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "start_line",
						Message: fmt.Sprintf("start_line %d is past the end of %s (%d lines)", start, rel, len(lines)),
						Hint:    "read the file to see its line numbers, or leave the range out"}
				}
				var target string
				target, count = re.replaceAll(strings.Join(lines[s:e+1], "\n"), replace, eol)
				var b strings.Builder
				for _, l := range lines[:s] {
					b.WriteString(l)
					b.WriteByte('\n')
				}
				b.WriteString(target)
				for _, l := range lines[e+1:] {
					b.WriteByte('\n')
					b.WriteString(l)
				}
				after = b.String()
			} else {
				after, count = re.replaceAll(text, replace, eol)
			}
			if strings.HasSuffix(text, "\n") && !strings.HasSuffix(after, "\n") {
				after += eol
			}
			if after == text {
				return nil, errUnchanged
			}
			return []byte(after), nil
		})
		switch {
		case errors.Is(err, errUnchanged):
			what := "no match"
			if count > 0 {
				what = fmt.Sprintf("%d %s, each replaced by the same text", count, plural(count, "match", "matches"))
			}
			return &engine.Result{Output: fmt.Sprintf("No changes needed for '%s': %s.", rel, what)}, nil
		case err != nil:
			return nil, editError(rel, err)
		}
		where := ""
		if hasStart || hasEnd {
			where = " in the given lines"
		}
		return &engine.Result{
			Output:  fmt.Sprintf("Replaced %d %s%s of %s.", count, plural(count, "match", "matches"), where, rel),
			Changes: []engine.FileChange{ch},
		}, nil
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// editTarget is the canonical path of an edit tool's "path".
func editTarget(c *engine.Call) (string, error) {
	rel, ok, err := c.Target()
	if err != nil {
		return "", err
	}
	if !ok {
		_, err := c.Require("path")
		return "", err
	}
	return rel, nil
}

func fileExists(c *engine.Call, rel string) (bool, error) {
	_, err := c.WS.Stat(rel)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// editError passes refusals through and names the file in other failures.
func editError(rel string, err error) error {
	if _, denied := engine.AsDenial(err); denied {
		return err
	}
	return fmt.Errorf("edit %s: %w", rel, unwrapPath(err))
}

// wholeNumber parses a whole number as models send one: 3, "3", 3.0.
func wholeNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// optInt reads an optional whole-number argument; "" counts as absent.
func optInt(c *engine.Call, name string) (int, bool, error) {
	s, ok, err := c.String(name)
	if err != nil || !ok || strings.TrimSpace(s) == "" {
		return 0, false, err
	}
	n, good := wholeNumber(s)
	if !good {
		return 0, false, &engine.Denial{Code: engine.InvalidArgument, Parameter: name,
			Message: fmt.Sprintf("parameter %q must be a whole number, got %q", name, s)}
	}
	return n, true, nil
}

// boolArg reads an optional boolean, sent as true/false or as "true"/"false".
func boolArg(c *engine.Call, name string) (bool, error) {
	s, ok, err := c.String(name)
	if err != nil || !ok {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, &engine.Denial{Code: engine.InvalidArgument, Parameter: name,
		Message: fmt.Sprintf("parameter %q must be true or false, got %q", name, s)}
}
