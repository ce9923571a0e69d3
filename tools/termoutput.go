package tools

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Terminal output is compressed before a model sees it, the way Roo Code's
// compressTerminalOutput does it: progress bars redrawn with "\r" keep only
// what a terminal would show, backspaces take back what they erase, runs of
// identical lines are folded, and what is still too long keeps its head and
// tail. Lengths are counted in UTF-16 code units, as JavaScript counts
// them, so the limits cut where Roo's do; cuts never split a character.

// Defaults of Roo Code's terminal settings.
const (
	DefaultTerminalLineLimit = 500
	DefaultTerminalCharLimit = 50_000
)

// CompressTerminalOutput applies, in order, carriage returns, backspaces,
// run-length folding of repeated lines, then the character limit (which
// wins) or the line limit. A limit of 0 is no limit.
func CompressTerminalOutput(s string, lineLimit, charLimit int) string {
	s = ProcessCarriageReturns(s)
	s = ProcessBackspaces(s)
	return TruncateOutput(ApplyRunLengthEncoding(s), lineLimit, charLimit)
}

// ProcessCarriageReturns rewrites each line the way a terminal shows it:
// after a "\r" the text that follows overwrites the line from its start,
// keeping the rest of a longer earlier text. "\r\n" ends a line as usual
// (the empty text after the "\r" overwrites nothing).
func ProcessCarriageReturns(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	for {
		line, rest, more := strings.Cut(s, "\n")
		if !strings.Contains(line, "\r") {
			out.WriteString(line)
		} else {
			segs := strings.Split(line, "\r")
			cur := []rune(segs[0])
			for _, seg := range segs[1:] {
				if seg == "" {
					continue
				}
				r := []rune(seg)
				if len(r) >= len(cur) {
					cur = r
				} else {
					cur = append(r, cur[len(r):]...)
				}
			}
			out.WriteString(string(cur))
		}
		if !more {
			return out.String()
		}
		out.WriteByte('\n')
		s = rest
	}
}

// ProcessBackspaces applies "\b" destructively: each one erases the
// character before it, and a run of n erases n characters.
func ProcessBackspaces(s string) string {
	if !strings.Contains(s, "\b") {
		return s
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\b' {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

// ApplyRunLengthEncoding folds a line repeated right after itself into the
// line and "<previous line repeated N additional times>", when that note is
// shorter than the repeats it replaces.
func ApplyRunLengthEncoding(s string) string {
	if s == "" {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	var prev string
	havePrev, repeats := false, 0
	flush := func(copies int) {
		if repeats == 0 {
			out.WriteString(prev)
			return
		}
		note := fmt.Sprintf("<previous line repeated %d additional times>\n", repeats)
		if jsLen(note) < jsLen(prev)*copies {
			out.WriteString(prev)
			out.WriteString(note)
		} else {
			for range repeats + 1 {
				out.WriteString(prev)
			}
		}
	}
	for pos := 0; pos < len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += pos + 1
		}
		line := s[pos:end]
		pos = end
		switch {
		case !havePrev:
			prev, havePrev = line, true
		case line == prev:
			repeats++
		default:
			flush(repeats + 1)
			prev, repeats = line, 0
		}
	}
	// Roo weighs the last run against one copy fewer than a run in the
	// middle; kept, so that the same output folds the same way.
	flush(repeats)
	return out.String()
}

// TruncateOutput keeps 20% of the limit from the start and 80% from the
// end. The character limit takes precedence; the line limit applies to
// output within it.
func TruncateOutput(s string, lineLimit, charLimit int) string {
	if lineLimit <= 0 && charLimit <= 0 {
		return s
	}
	if charLimit > 0 {
		if n := jsLen(s); n > charLimit {
			before := charLimit * 2 / 10
			after := charLimit - before
			return jsPrefix(s, before) + fmt.Sprintf("\n[...%d characters omitted...]\n", n-charLimit) + jsSuffix(s, after)
		}
	}
	if lineLimit <= 0 {
		return s
	}
	total := strings.Count(s, "\n") + 1
	if total <= lineLimit {
		return s
	}
	before := lineLimit * 2 / 10
	after := lineLimit - before
	// The head ends after its last line's "\n"; the tail starts after the
	// "\n" that precedes its first line.
	headEnd := 0
	for i := 0; i < before; i++ {
		j := strings.IndexByte(s[headEnd:], '\n')
		if j < 0 {
			break
		}
		headEnd += j + 1
	}
	tailStart, pos := len(s), len(s)
	for i := 0; i < after; i++ {
		j := strings.LastIndexByte(s[:pos], '\n')
		if j < 0 {
			break
		}
		tailStart, pos = j+1, j
	}
	return s[:headEnd] + fmt.Sprintf("\n[...%d lines omitted...]\n\n", total-lineLimit) + s[tailStart:]
}

// jsLen is the length of s in UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// jsPrefix is the longest prefix of s of at most n UTF-16 units.
func jsPrefix(s string, n int) string {
	for i, r := range s {
		if n -= utf16.RuneLen(r); n < 0 {
			return s[:i]
		}
	}
	return s
}

// jsSuffix is the longest suffix of s of at most n UTF-16 units.
func jsSuffix(s string, n int) string {
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if n -= utf16.RuneLen(r); n < 0 {
			break
		}
		i -= size
	}
	return s[i:]
}
