package tools

// Text handling with the semantics of the JavaScript Roo Code runs on: its
// white space, its line terminators, its string length in UTF-16 code units,
// and Node's decoding of a file as UTF-8.

import (
	"math"
	"strings"
	"unicode/utf8"
)

// isJSSpace is JavaScript's white space and line terminators: what \s
// matches and String.prototype.trim removes.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// isJSLineTerminator is what JavaScript's "." does not match and after
// which a multiline "^" matches.
func isJSLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// normalizeText is what Roo Code compares: smart quotes, dashes, the
// ellipsis and the no-break space made ASCII, every run of white space
// (newlines included) made one space, and the ends trimmed.
func normalizeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		var rep string
		switch r {
		case '\u201c', '\u201d':
			r = '"'
		case '\u2018', '\u2019':
			r = '\''
		case '\u2014', '\u2013':
			r = '-'
		case '\u2026':
			rep = "..."
		}
		if rep == "" && isJSSpace(r) {
			pending = true
			continue
		}
		if pending && b.Len() > 0 {
			b.WriteByte(' ')
		}
		pending = false
		if rep != "" {
			b.WriteString(rep)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitJSLines is text.split(/\r?\n/).
func splitJSLines(s string) []string {
	parts := strings.Split(s, "\n")
	for i := 0; i < len(parts)-1; i++ {
		parts[i] = strings.TrimSuffix(parts[i], "\r")
	}
	return parts
}

// unescapeMarkers drops the backslash that escapes a marker at the start of
// a line ("^" in JavaScript's multiline mode: after \n, \r, U+2028, U+2029).
func unescapeMarkers(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	escapable := []string{"<<<<<<<", "=======", ">>>>>>>", "-------", ":end_line:", ":start_line:"}
	var b strings.Builder
	b.Grow(len(s))
	atLineStart := true
	for i := 0; i < len(s); {
		if atLineStart && s[i] == '\\' {
			for _, e := range escapable {
				if strings.HasPrefix(s[i+1:], e) {
					i++ // drop the backslash
					break
				}
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		atLineStart = isJSLineTerminator(r)
		i += size
	}
	return b.String()
}

// numberPrefix parses "^\s*\d+\s+\|(?!\|)" at the start of line and returns
// the index of the "|", or -1.
func numberPrefix(line string) int {
	i := skipJSSpace(line, 0)
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	k := skipJSSpace(line, j)
	if k == j || k >= len(line) || line[k] != '|' {
		return -1
	}
	if k+1 < len(line) && line[k+1] == '|' {
		return -1
	}
	return k
}

func skipJSSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isJSSpace(r) {
			break
		}
		i += size
	}
	return i
}

// everyLineNumbered reports whether every line of s starts with a read_file
// style "N | " prefix.
func everyLineNumbered(s string) bool {
	for _, l := range splitJSLines(s) {
		if numberPrefix(l) < 0 {
			return false
		}
	}
	return true
}

// leadingNumber is JavaScript's parseInt of the text before the first "|".
func leadingNumber(line string) float64 {
	if i := strings.IndexByte(line, '|'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimLeftFunc(line, isJSSpace)
	j := 0
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == 0 {
		return math.NaN()
	}
	return jsNumber(line[:j])
}

func hasJSLineTerminator(s string) bool {
	return strings.ContainsAny(s, "\n\r\u2028\u2029")
}

// stripLineNumbers removes line-number prefixes line by line. Strictly, a
// prefix is "N |" and one optional white space character; aggressively, it
// is an optional "N " before "|" and exactly one white space character after
// it. A line whose remainder holds a line terminator keeps its prefix, as
// JavaScript's "(.*)$" fails on it. The lines are joined with CRLF if s had
// any.
func stripLineNumbers(s string, aggressive bool) string {
	lines := splitJSLines(s)
	for i, l := range lines {
		if rest, ok := stripPrefix(l, aggressive); ok {
			lines[i] = rest
		}
	}
	eol := "\n"
	if strings.Contains(s, "\r\n") {
		eol = "\r\n"
	}
	out := strings.Join(lines, eol)
	if strings.HasSuffix(s, "\n") && !strings.HasSuffix(out, eol) {
		out += eol
	}
	return out
}

func stripPrefix(l string, aggressive bool) (string, bool) {
	if !aggressive {
		k := numberPrefix(l)
		if k < 0 {
			return "", false
		}
		rest := l[k+1:]
		if r, size := utf8.DecodeRuneInString(rest); size > 0 && isJSSpace(r) && !hasJSLineTerminator(rest[size:]) {
			return rest[size:], true
		}
		if hasJSLineTerminator(rest) {
			return "", false
		}
		return rest, true
	}
	k := strings.IndexByte(l, '|')
	if k < 0 {
		return "", false
	}
	// Before the bar: white space, then optionally digits and exactly one
	// white space character.
	pre := l[skipJSSpace(l, 0):k]
	if pre != "" {
		j := 0
		for j < len(pre) && pre[j] >= '0' && pre[j] <= '9' {
			j++
		}
		r, size := utf8.DecodeRuneInString(pre[j:])
		if j == 0 || size == 0 || !isJSSpace(r) || j+size != len(pre) {
			return "", false
		}
	}
	rest := l[k+1:]
	r, size := utf8.DecodeRuneInString(rest)
	if size == 0 || !isJSSpace(r) || hasJSLineTerminator(rest[size:]) {
		return "", false
	}
	return rest[size:], true
}

// decodeUTF8 is b decoded the way Node reads a file as UTF-8: every
// ill-formed sequence (a maximal subpart, in Unicode's terms) becomes one
// U+FFFD. Valid text is returned as it is, byte order mark included.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b) + 16)
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		need, lo, hi := 0, byte(0x80), byte(0xbf)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c == 0xe0:
			need, lo = 2, 0xa0
		case c == 0xed:
			need, hi = 2, 0x9f
		case c >= 0xe1 && c <= 0xef:
			need = 2
		case c == 0xf0:
			need, lo = 3, 0x90
		case c == 0xf4:
			need, hi = 3, 0x8f
		case c >= 0xf1 && c <= 0xf3:
			need = 3
		}
		j := i + 1
		got := 0
		for got < need && j < len(b) && b[j] >= lo && b[j] <= hi {
			lo, hi = 0x80, 0xbf
			j++
			got++
		}
		if need > 0 && got == need {
			out.Write(b[i:j])
		} else {
			out.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return out.String()
}

// levenshtein is the edit distance between a and b in UTF-16 code units,
// computed with Myers' bit-vector algorithm in 64-row blocks.
func levenshtein(a, b []uint16) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	m := len(b)
	if m == 0 {
		return len(a)
	}
	sym := make(map[uint16]int)
	for _, c := range b {
		if _, ok := sym[c]; !ok {
			sym[c] = len(sym)
		}
	}
	nsym := len(sym)
	nblocks := (m + 63) / 64
	peq := make([]uint64, nblocks*nsym)
	for i, c := range b {
		peq[(i/64)*nsym+sym[c]] |= 1 << (i % 64)
	}
	text := make([]int, len(a))
	for j, c := range a {
		if s, ok := sym[c]; ok {
			text[j] = s
		} else {
			text[j] = -1
		}
	}
	// h[j] is the horizontal difference entering the current block at
	// column j: D[0][j] - D[0][j-1] = +1 along the top row.
	h := make([]int8, len(a))
	for j := range h {
		h[j] = 1
	}
	for blk := 0; blk < nblocks; blk++ {
		w := min(64, m-64*blk)
		high := uint64(1) << (w - 1)
		pv, mv := ^uint64(0), uint64(0)
		base := blk * nsym
		for j, s := range text {
			var eq uint64
			if s >= 0 {
				eq = peq[base+s]
			}
			xv := eq | mv
			hin := h[j]
			if hin < 0 {
				eq |= 1
			}
			xh := (((eq & pv) + pv) ^ pv) | eq
			ph := mv | ^(xh | pv)
			mh := pv & xh
			var hout int8
			if ph&high != 0 {
				hout = 1
			} else if mh&high != 0 {
				hout = -1
			}
			ph <<= 1
			mh <<= 1
			if hin < 0 {
				mh |= 1
			} else if hin > 0 {
				ph |= 1
			}
			pv = mh | ^(xv | ph)
			mv = ph & xv
			h[j] = hout
		}
	}
	d := m
	for _, x := range h {
		d += int(x)
	}
	return d
}
