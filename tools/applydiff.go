package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/intentgate/intentgate/engine"
)

const (
	// diffBufferLines is how far around a :start_line: hint a block is
	// looked for when it is not found exactly there.
	diffBufferLines = 40
	// scoreBudget bounds the Levenshtein work spent on describing the
	// closest match of a block that failed (the outcome never depends on it).
	scoreBudget = 50_000_000
)

// diffFormat is the shape of a block, shown whenever a diff is malformed.
const diffFormat = `<<<<<<< SEARCH
:start_line: (optional) the line of the file where the search text starts
-------
[the exact text to find, whitespace and indentation included]
=======
[the text to put in its place]
>>>>>>> REPLACE`

// ApplyDiff is apply_diff(path, diff): it applies one or more SEARCH/REPLACE
// blocks to an existing file exactly as Roo Code's multi-search-replace
// strategy does (the same block grammar, marker validation, white-space-blind
// matching and line edits), so a diff written for Roo Code changes a file
// here byte for byte as it would there. The call succeeds when at least one
// block applied; the output then names the blocks that did not, and why. A diff
// that is not well formed is refused (INVALID_ARGUMENT) with the correct
// format; a diff none of whose blocks applies is a tool error that shows the
// closest text found for each block.
//
// The file is changed through Workspace.Edit, so the hash lock's
// precondition is checked again under the file lock right before the
// replace. An older start_line argument is accepted and, as in Roo Code 3.x,
// has no effect: hints belong in each block's :start_line: line.
func ApplyDiff() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		rel, ok, err := c.Target()
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("path")
			return nil, err
		}
		diff, err := c.Require("diff")
		if err != nil {
			return nil, err
		}
		if diff == "" {
			return nil, &engine.Denial{Code: engine.MissingParameter, Tool: c.Tool, Parameter: "diff",
				Message: "apply_diff needs a non-empty \"diff\" with at least one SEARCH/REPLACE block",
				Hint:    "call apply_diff again with the blocks in \"diff\":\n" + diffFormat}
		}
		blocks, err := parseDiff(diff)
		if err != nil {
			var fe *diffFormatError
			if errors.As(err, &fe) {
				return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Path: rel, Parameter: "diff",
					Message: fe.Error(),
					Hint:    "fix the markers and send the diff again; a marker that is part of the file's text is escaped with a backslash at the start of its line"}
			}
			return nil, err
		}

		// apply_diff edits existing files only. Checking first also keeps
		// Edit from creating the directories of a path that does not exist.
		fi, err := c.WS.Stat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("apply_diff %s: the file does not exist; check the path, or create the file with write_to_file", rel)
		}
		if err != nil {
			if _, denied := engine.AsDenial(err); denied {
				return nil, err
			}
			return nil, fmt.Errorf("apply_diff %s: %w", rel, unwrapPath(err))
		}
		if fi.Size() > maxReadBytes {
			return nil, fmt.Errorf("apply_diff %s: the file is %d bytes, more than the %d apply_diff handles", rel, fi.Size(), maxReadBytes)
		}

		var rep applyReport
		ch, err := c.WS.Edit(c, rel, func(before []byte, existed bool) ([]byte, error) {
			if !existed {
				return nil, fmt.Errorf("apply_diff %s: the file was deleted before the diff could be applied", rel)
			}
			rep = applyBlocks(decodeUTF8(before), blocks)
			if rep.applied == 0 {
				return nil, &noBlockApplied{rel: rel, report: rep}
			}
			return []byte(rep.content), nil
		})
		if err != nil {
			var nb *noBlockApplied
			if _, denied := engine.AsDenial(err); denied || errors.As(err, &nb) {
				return nil, err
			}
			return nil, fmt.Errorf("apply_diff %s: %w", rel, unwrapPath(err))
		}
		return &engine.Result{
			Output:  successMessage(rel, diff, len(blocks), rep),
			Changes: []engine.FileChange{ch},
		}, nil
	})
}

// noBlockApplied is the tool error when every block of a diff failed.
type noBlockApplied struct {
	rel    string
	report applyReport
}

func (e *noBlockApplied) Error() string {
	var b strings.Builder
	if n := len(e.report.failures); n == 1 {
		fmt.Fprintf(&b, "apply_diff changed nothing in %s: its SEARCH/REPLACE block did not apply.\n", e.rel)
	} else {
		fmt.Fprintf(&b, "apply_diff changed nothing in %s: none of its %d SEARCH/REPLACE blocks applied.\n", e.rel, n)
	}
	for _, f := range e.report.failures {
		b.WriteString("\n")
		b.WriteString(f.describe())
	}
	b.WriteString("\nRead the file again with read_file to see its current content, then send corrected blocks.")
	return b.String()
}

func successMessage(rel, diff string, total int, rep applyReport) string {
	var b strings.Builder
	if len(rep.failures) == 0 {
		fmt.Fprintf(&b, "%s was modified: ", rel)
		if total == 1 {
			b.WriteString("the SEARCH/REPLACE block applied.")
		} else {
			fmt.Fprintf(&b, "all %d SEARCH/REPLACE blocks applied.", total)
		}
		b.WriteString(" You do not need to read the file again; its new content is your baseline.")
	} else {
		fmt.Fprintf(&b, "%s was modified, but only %d of %d SEARCH/REPLACE blocks applied; the ones that failed changed nothing. "+
			"Read the file again with read_file and send the failed blocks again against its current content.\n",
			rel, rep.applied, total)
		for _, f := range rep.failures {
			b.WriteString("\n")
			b.WriteString(f.describe())
		}
	}
	if strings.Count(diff, "<<<<<<< SEARCH") == 1 {
		b.WriteString("\nNote: several related changes to one file are best sent as several SEARCH/REPLACE blocks in one apply_diff call.")
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Parsing

// diffBlock is one SEARCH/REPLACE block as written in the diff.
type diffBlock struct {
	index     int     // 1-based position in the diff
	startLine float64 // the :start_line: hint; 0 when there is none
	search    string
	replace   string
}

// diffFormatError is a malformed diff: the message says where and what, and
// shows the correct format.
type diffFormatError struct {
	msg string
}

func (e *diffFormatError) Error() string { return e.msg }

// jsSpaceClass is JavaScript's \s: the regular expressions of the strategy
// are JavaScript ones, whose \s is Unicode white space, not ASCII only.
const jsSpaceClass = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

// blockRE finds blocks. Roo Code's expression uses look-behinds to require
// that "=======" and ">>>>>>> REPLACE" start a line and are not escaped, and
// a look-ahead after "REPLACE". Go has neither, so the same language is
// spelled with ordered alternatives: a section is empty with its newline,
// empty without one (only ever directly after the preceding marker line), or
// at least one character followed by a newline; the shortest that lets the
// rest match wins, exactly as with the lazy JavaScript groups. The newline
// after "REPLACE" is consumed here and given back by the caller.
var blockRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(
		`(?:^|\n)<<<<<<< SEARCH>?` + jsSpaceClass + `*\n` +
			`(?::start_line:` + jsSpaceClass + `*([0-9]+)` + jsSpaceClass + `*\n)?` +
			`(?::end_line:` + jsSpaceClass + `*[0-9]+` + jsSpaceClass + `*\n)?` +
			`(?:-------` + jsSpaceClass + `*\n)?` +
			`(?:\n|()|((?s:.)+?)\n)` +
			`=======` + jsSpaceClass + `*\n` +
			`(?:\n|()|((?s:.)+?)\n)` +
			`>>>>>>> REPLACE(\n|$)`)
})

// parseDiff validates the markers of diff and returns its blocks.
func parseDiff(diff string) ([]diffBlock, error) {
	if err := validateMarkers(diff); err != nil {
		return nil, err
	}
	var blocks []diffBlock
	for pos := 0; pos < len(diff); {
		m := blockRE().FindStringSubmatchIndex(diff[pos:])
		if m == nil {
			break
		}
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return diff[pos+m[2*i] : pos+m[2*i+1]]
		}
		b := diffBlock{index: len(blocks) + 1, search: group(3), replace: group(5)}
		if digits := group(1); digits != "" {
			b.startLine = jsNumber(digits)
		}
		blocks = append(blocks, b)
		if group(6) == "" {
			break // the block ended the diff
		}
		// The newline after REPLACE may begin the next block.
		pos += m[1] - 1
	}
	if len(blocks) == 0 {
		return nil, &diffFormatError{msg: "the diff has no complete SEARCH/REPLACE block: each marker must stand on its own line, " +
			"starting at the first column, in this order:\n\n" + diffFormat}
	}
	return blocks, nil
}

// jsNumber is Number(digits) in JavaScript: the nearest float64, +Inf when
// too large.
func jsNumber(digits string) float64 {
	f, _ := strconv.ParseFloat(digits, 64)
	return f
}

const (
	markSearch       = "<<<<<<< SEARCH"
	markSep          = "======="
	markReplace      = ">>>>>>> REPLACE"
	markSearchPrefix = "<<<<<<<"
	markReplacePre   = ">>>>>>>"
)

func isSearchMarker(trimmed string) bool {
	return trimmed == markSearch || trimmed == markSearch+">"
}

// validateMarkers walks the diff's lines (trimmed, as Roo Code does: an
// indented marker still counts here) through SEARCH, =======, REPLACE and
// refuses any other sequence, with the message Roo Code's validation gives
// in substance.
func validateMarkers(diff string) error {
	lines := strings.Split(diff, "\n")
	if looksMangled(lines) {
		return &diffFormatError{msg: "the diff is malformed; this usually means the markers were generated incorrectly.\n\n" +
			describeMarkers(lines) +
			"\nCheck that every block has exactly one SEARCH, one ======= and one REPLACE marker, each on its own line; " +
			"read the file first with read_file so the SEARCH text matches it exactly; " +
			"prefer several small blocks; escape markers that are part of the file's text.\n\nThe correct format:\n\n" + diffFormat}
	}

	const (
		start = iota
		afterSearch
		afterSep
	)
	state := start
	var searches, seps, replaces int
	for _, l := range lines {
		t := jsTrim(l)
		switch {
		case isSearchMarker(t):
			searches++
		case t == markSep:
			seps++
		case t == markReplace:
			replaces++
		}
	}
	badStructure := searches != replaces || seps < searches

	for i, l := range lines {
		n := i + 1
		t := jsTrim(l)
		if state == afterSep {
			for _, lm := range []string{":start_line:", ":end_line:"} {
				if strings.HasPrefix(t, lm) {
					return &diffFormatError{msg: fmt.Sprintf("line %d: the line marker %q is in a REPLACE section; "+
						":start_line: and :end_line: belong in the SEARCH section, right after <<<<<<< SEARCH.\n\n"+
						"Correct:\n<<<<<<< SEARCH\n:start_line:5\n-------\ntext to find\n=======\nreplacement text\n>>>>>>> REPLACE\n\n"+
						"Wrong:\n<<<<<<< SEARCH\ntext to find\n=======\n:start_line:5\nreplacement text\n>>>>>>> REPLACE", n, lm)}
				}
			}
		}
		switch state {
		case start:
			switch {
			case t == markSep:
				if badStructure {
					return misplacedMarker(n, markSep, markSearch)
				}
				return unescapedMarker(n, markSep)
			case t == markReplace:
				return misplacedMarker(n, markReplace, markSearch)
			case strings.HasPrefix(t, markReplacePre):
				return unescapedMarker(n, t)
			case isSearchMarker(t):
				state = afterSearch
			case strings.HasPrefix(t, markSearchPrefix):
				return unescapedMarker(n, t)
			}
		case afterSearch:
			switch {
			case isSearchMarker(t):
				return misplacedMarker(n, t, markSep)
			case strings.HasPrefix(t, markSearchPrefix):
				return unescapedMarker(n, t)
			case t == markReplace:
				return misplacedMarker(n, markReplace, markSep)
			case strings.HasPrefix(t, markReplacePre):
				return unescapedMarker(n, t)
			case t == markSep:
				state = afterSep
			}
		case afterSep:
			switch {
			case isSearchMarker(t):
				return misplacedMarker(n, t, markReplace)
			case strings.HasPrefix(t, markSearchPrefix):
				return unescapedMarker(n, t)
			case t == markSep:
				if badStructure {
					return misplacedMarker(n, markSep, markReplace)
				}
				return unescapedMarker(n, markSep)
			case t == markReplace:
				state = start
			case strings.HasPrefix(t, markReplacePre):
				return unescapedMarker(n, t)
			}
		}
	}
	switch state {
	case afterSearch:
		return &diffFormatError{msg: "the diff ended inside a block: the '=======' separating SEARCH from REPLACE was not found.\n\nThe correct format:\n\n" + diffFormat}
	case afterSep:
		return &diffFormatError{msg: "the diff ended inside a block: the closing '>>>>>>> REPLACE' was not found.\n\nThe correct format:\n\n" + diffFormat}
	}
	return nil
}

func misplacedMarker(line int, found, expected string) error {
	return &diffFormatError{msg: fmt.Sprintf("line %d: the diff block is malformed: found the marker '%s' where '%s' was expected.\n\nThe correct format:\n\n%s",
		line, found, expected, diffFormat)}
}

func unescapedMarker(line int, found string) error {
	return &diffFormatError{msg: fmt.Sprintf("line %d: the marker '%s' appears inside a block. "+
		"If it is part of the file's text (for example a merge conflict you are resolving), escape it with a backslash at the start of its line:\n\n"+
		"<<<<<<< SEARCH\ntext before\n\\%s    <-- escaped\ntext after\n=======\nreplacement text\n>>>>>>> REPLACE\n\n"+
		"Only these markers need escaping inside SEARCH or REPLACE text: \\%s, \\%s, \\%s",
		line, found, found, markSearch, markSep, markReplace)}
}

// looksMangled reports the shapes Roo Code singles out as a model's garbled
// output: a separator before any SEARCH marker, two separators in a row, or
// more than two separators per SEARCH marker. Every such diff also fails the
// sequence check; only the message differs.
func looksMangled(lines []string) bool {
	seps, searches := 0, 0
	sawSearch, sepFirst, doubled := false, false, false
	for i, l := range lines {
		t := jsTrim(l)
		if t == markSep {
			seps++
			if !sawSearch {
				sepFirst = true
			}
			if i > 0 && jsTrim(lines[i-1]) == markSep {
				doubled = true
			}
		}
		if strings.HasPrefix(t, markSearch) {
			sawSearch = true
			searches++
		}
	}
	return doubled || sepFirst || seps > 2*searches
}

func describeMarkers(lines []string) string {
	var searches, seps, replaces int
	for _, l := range lines {
		t := jsTrim(l)
		switch {
		case strings.HasPrefix(t, markSearch):
			searches++
		case t == markSep:
			seps++
		case t == markReplace:
			replaces++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- SEARCH markers: %d\n- separators (=======): %d\n- REPLACE markers: %d\n", searches, seps, replaces)
	if searches != replaces {
		b.WriteString("- the SEARCH and REPLACE markers do not pair up\n")
	}
	if seps > searches {
		b.WriteString("- there are more separators than SEARCH markers\n")
	}
	for i := 1; i < len(lines); i++ {
		if jsTrim(lines[i]) == markSep && jsTrim(lines[i-1]) == markSep {
			fmt.Fprintf(&b, "- lines %d and %d are both separators\n", i, i+1)
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Applying

// applyReport is what applying the blocks of a diff to a file's text gave.
type applyReport struct {
	content  string
	applied  int
	failures []blockFailure
}

// blockFailure explains why one block changed nothing.
type blockFailure struct {
	block  diffBlock
	reason string
	// For blocks whose SEARCH text was not found:
	notFound  bool
	at        float64 // the :start_line: hint after earlier blocks, 0 if none
	score     float64 // similarity of the closest text, 0..1
	best      string  // the closest text, "" if nothing came close
	bestLine  float64 // its first line
	searched  string  // which lines were searched
	truncated bool    // scoring stopped early; best is the best seen
}

func (f blockFailure) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Block %d", f.block.index)
	if f.block.startLine != 0 {
		fmt.Fprintf(&b, " (:start_line:%s)", jsNumString(f.block.startLine))
	}
	b.WriteString(": ")
	if !f.notFound {
		b.WriteString(f.reason)
		b.WriteString("\n")
		return b.String()
	}
	b.WriteString("its SEARCH text was not found")
	if f.at != 0 {
		fmt.Fprintf(&b, " at line %s", jsNumString(f.at))
	}
	fmt.Fprintf(&b, " (the closest text is %d%% similar; 100%% is needed, ignoring only differences in whitespace, smart quotes and dashes). ",
		int(math.Floor(f.score*100)))
	fmt.Fprintf(&b, "Searched %s, also with line-number prefixes removed.\n", f.searched)
	if f.best == "" {
		b.WriteString("Closest match found: none.\n")
	} else {
		fmt.Fprintf(&b, "Closest match found (%d%% similar", int(math.Floor(f.score*100)))
		if f.truncated {
			b.WriteString(", among the candidates compared before the search was cut short")
		}
		b.WriteString("):\n")
		b.WriteString(numberLines(f.best, f.bestLine))
	}
	return b.String()
}

// numberLines is text with "N | " prefixes from line first on, as read_file
// shows lines.
func numberLines(text string, first float64) string {
	lines := strings.Split(text, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	width := len(jsNumString(first + float64(len(lines)-1)))
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%*s | %s\n", width, jsNumString(first+float64(i)), l)
	}
	return b.String()
}

func jsNumString(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// applyBlocks applies blocks to text the way Roo Code's strategy does: in
// ascending :start_line: order (blocks without one first, in diff order),
// each hint moved by the lines earlier blocks added or removed, each block
// replacing the lines it matched in the current text. Line endings follow
// the text: CRLF if it has any, else LF.
//
// Roo Code computes line positions with JavaScript numbers and slices with
// JavaScript's rules (negative positions count from the end, positions past
// the end clamp). Hints past the end of the file, or moved below 1 by
// earlier blocks, reach those corners, so positions here are float64 and
// every slice goes through jsSlice.
func applyBlocks(text string, blocks []diffBlock) applyReport {
	sorted := append([]diffBlock(nil), blocks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].startLine < sorted[j].startLine })

	eol := "\n"
	if strings.Contains(text, "\r\n") {
		eol = "\r\n"
	}
	lines := splitJSLines(text)
	var rep applyReport
	budget := scoreBudget
	delta := 0.0
	for _, blk := range sorted {
		search, replace := blk.search, blk.replace
		startLine := blk.startLine
		if startLine != 0 {
			startLine += delta
		}
		search = unescapeMarkers(search)
		replace = unescapeMarkers(replace)

		// Text pasted from read_file output carries "N | " prefixes.
		numbered := everyLineNumbered(search) && (everyLineNumbered(replace) || jsTrim(replace) == "")
		if numbered && startLine == 0 {
			startLine = leadingNumber(strings.SplitN(search, "\n", 2)[0])
		}
		if numbered {
			search = stripLineNumbers(search, false)
			replace = stripLineNumbers(replace, false)
		}
		if search == replace {
			rep.failures = append(rep.failures, blockFailure{block: blk,
				reason: "its SEARCH and REPLACE text are identical, so it would change nothing; check that the REPLACE text holds the change."})
			continue
		}
		var searchLines, replaceLines []string
		if search != "" {
			searchLines = splitJSLines(search)
		}
		if replace != "" {
			replaceLines = splitJSLines(replace)
		}
		if len(searchLines) == 0 {
			rep.failures = append(rep.failures, blockFailure{block: blk,
				reason: "its SEARCH text is empty. To insert text, search for a line next to the insertion point and repeat it in the REPLACE text together with the new lines."})
			continue
		}

		matchIndex, bestScore, bestContent := -1.0, 0.0, ""
		chunk := strings.Join(searchLines, "\n")
		n := float64(len(searchLines))
		lo, hi := 0.0, float64(len(lines))
		hinted := startLine != 0 && !math.IsNaN(startLine)
		if hinted {
			exact := startLine - 1
			exactEnd := exact + n - 1
			orig := strings.Join(jsSlice(lines, exact, exactEnd+1), "\n")
			if sameText(orig, chunk) {
				matchIndex, bestScore, bestContent = exact, 1, orig
			} else {
				lo = math.Max(0, startLine-(diffBufferLines+1))
				hi = math.Min(float64(len(lines)), startLine+n+diffBufferLines)
			}
		}
		var truncated bool
		var norm *normLines
		if matchIndex == -1 {
			norm = newNormLines(lines)
			if i, c, ok := firstExact(norm, chunk, lo, hi); ok {
				matchIndex, bestScore, bestContent = i, 1, c
			} else {
				bestScore, matchIndex, bestContent, truncated = closestChunk(norm, chunk, lo, hi, &budget)
			}
		}
		if matchIndex == -1 || bestScore < 1 {
			// Second pass: strip looser line-number prefixes from both sides.
			aggSearch := stripLineNumbers(search, true)
			aggReplace := stripLineNumbers(replace, true)
			var aggLines []string
			if aggSearch != "" {
				aggLines = splitJSLines(aggSearch)
			}
			if norm == nil {
				norm = newNormLines(lines)
			}
			if i, _, ok := firstExact(norm, strings.Join(aggLines, "\n"), lo, hi); ok {
				matchIndex = i
				searchLines = aggLines
				replaceLines = nil
				if aggReplace != "" {
					replaceLines = splitJSLines(aggReplace)
				}
			} else {
				f := blockFailure{block: blk, notFound: true, score: bestScore, best: bestContent,
					bestLine: matchIndex + 1, truncated: truncated, searched: "the whole file"}
				if hinted {
					f.at = startLine
					if lo < hi {
						f.searched = fmt.Sprintf("lines %s-%s", jsNumString(lo+1), jsNumString(hi))
					} else {
						f.searched = "no lines (the hint is past the end of the file)"
					}
				}
				rep.failures = append(rep.failures, f)
				continue
			}
		}

		matched := jsSlice(lines, matchIndex, matchIndex+float64(len(searchLines)))
		matchedIndent := ""
		if len(matched) > 0 {
			matchedIndent = leadingIndent(matched[0])
		}
		searchIndent := leadingIndent(searchLines[0])
		indented := make([]string, 0, len(replaceLines))
		for _, l := range replaceLines {
			cur := leadingIndent(l)
			rel := len(cur) - len(searchIndent)
			var ind string
			if rel < 0 {
				ind = matchedIndent[:max(0, len(matchedIndent)+rel)]
			} else {
				ind = matchedIndent + cur[len(searchIndent):]
			}
			indented = append(indented, ind+jsTrim(l))
		}
		before := jsSlice(lines, 0, matchIndex)
		after := jsSlice(lines, matchIndex+float64(len(searchLines)), math.Inf(1))
		next := make([]string, 0, len(before)+len(indented)+len(after))
		next = append(next, before...)
		next = append(next, indented...)
		next = append(next, after...)
		lines = next
		delta = delta - float64(len(matched)) + float64(len(replaceLines))
		rep.applied++
	}
	rep.content = strings.Join(lines, eol)
	return rep
}

// leadingIndent is the run of tabs and spaces that starts s.
func leadingIndent(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[:i]
}

// jsSlice is Array.prototype.slice: negative positions count from the end,
// positions past either end clamp, NaN is 0, fractions truncate.
func jsSlice(lines []string, start, end float64) []string {
	s, e := jsBounds(len(lines), start, end)
	return lines[s:e]
}

// jsBounds is the [s, e) that slice(start, end) takes of n elements.
func jsBounds(n int, start, end float64) (s, e int) {
	pos := func(x float64) int {
		if math.IsNaN(x) {
			return 0
		}
		x = math.Trunc(x)
		if x < 0 {
			return int(math.Max(float64(n)+x, 0))
		}
		return int(math.Min(x, float64(n)))
	}
	s, e = pos(start), pos(end)
	return s, max(s, e)
}

// middleOut visits candidate first lines of a block of searchLen lines in
// [start, end] in Roo Code's order: the midpoint, then alternately one below
// and one above, moving outwards. visit returns false to stop.
func middleOut(start, end float64, searchLen int, visit func(i float64) bool) {
	if math.IsInf(start, 1) || math.IsNaN(start) || math.IsNaN(end) {
		// Roo Code loops forever on a hint too large for a float64; here the
		// block simply is not found.
		return
	}
	mid := math.Floor((start + end) / 2)
	left, right := mid, mid+1
	top := end - float64(searchLen)
	for left >= start || right <= top {
		if left >= start {
			if !visit(left) {
				return
			}
			left--
		}
		if right <= top {
			if !visit(right) {
				return
			}
			right++
		}
	}
}

// normLines holds the normalized form of every line of a text. Because
// normalizing collapses each run of white space, newlines included, the
// normalized text of lines s..e-1 joined by "\n" is their non-empty
// normalized forms joined by single spaces; prefix sums give its length
// without building it.
type normLines struct {
	lines []string
	norm  []string
	size  []int // size[i]: total length of norm[:i]
	words []int // words[i]: non-empty entries in norm[:i]
}

func newNormLines(lines []string) *normLines {
	x := &normLines{lines: lines, norm: make([]string, len(lines)),
		size: make([]int, len(lines)+1), words: make([]int, len(lines)+1)}
	for i, l := range lines {
		x.norm[i] = normalizeText(l)
		x.size[i+1] = x.size[i] + len(x.norm[i])
		x.words[i+1] = x.words[i]
		if x.norm[i] != "" {
			x.words[i+1]++
		}
	}
	return x
}

// normLen is len(normalizeText(strings.Join(lines[s:e], "\n"))).
func (x *normLines) normLen(s, e int) int {
	n := x.words[e] - x.words[s]
	if n == 0 {
		return 0
	}
	return x.size[e] - x.size[s] + n - 1
}

// normText is normalizeText(strings.Join(lines[s:e], "\n")).
func (x *normLines) normText(s, e int) string {
	var b strings.Builder
	b.Grow(x.normLen(s, e))
	for _, w := range x.norm[s:e] {
		if w == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// firstExact returns the first candidate, in middle-out order, whose text is
// the same as chunk once normalized: the one Roo Code's fuzzy search settles
// on when the threshold is 100%.
func firstExact(x *normLines, chunk string, start, end float64) (idx float64, content string, ok bool) {
	if chunk == "" {
		return -1, "", false
	}
	want := normalizeText(chunk)
	searchLen := strings.Count(chunk, "\n") + 1
	idx = -1
	middleOut(start, end, searchLen, func(i float64) bool {
		s, e := jsBounds(len(x.lines), i, i+float64(searchLen))
		if x.normLen(s, e) == len(want) && x.normText(s, e) == want {
			idx, content, ok = i, strings.Join(x.lines[s:e], "\n"), true
			return false
		}
		return true
	})
	return idx, content, ok
}

// closestChunk is Roo Code's fuzzy search with scores, used only to describe
// a block that was not found: the first candidate with the highest
// similarity wins. It stops when budget runs out and says so.
func closestChunk(x *normLines, chunk string, start, end float64, budget *int) (score, idx float64, content string, truncated bool) {
	idx = -1
	if chunk == "" {
		return 0, -1, "", false
	}
	want := utf16.Encode([]rune(normalizeText(chunk)))
	searchLen := strings.Count(chunk, "\n") + 1
	middleOut(start, end, searchLen, func(i float64) bool {
		s, e := jsBounds(len(x.lines), i, i+float64(searchLen))
		got := utf16.Encode([]rune(x.normText(s, e)))
		cost := ((min(len(got), len(want)) + 63) / 64) * max(len(got), len(want))
		if *budget < cost {
			truncated = true
			return false
		}
		*budget -= cost
		if sim := similarity16(got, want); sim > score {
			score, idx, content = sim, i, strings.Join(x.lines[s:e], "\n")
		}
		return true
	})
	return score, idx, content, truncated
}

// similarity16 is 1 - levenshtein/max(len) over normalized UTF-16 text.
func similarity16(a, b []uint16) float64 {
	if len(a) == len(b) {
		same := true
		for i := range a {
			if a[i] != b[i] {
				same = false
				break
			}
		}
		if same {
			return 1
		}
	}
	return 1 - float64(levenshtein(a, b))/float64(max(len(a), len(b)))
}

// sameText reports whether original matches search at 100% similarity.
func sameText(original, search string) bool {
	return search != "" && normalizeText(original) == normalizeText(search)
}
