package tools

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDiff checks that no diff makes the parser or the applier panic,
// and that a block whose SEARCH text is an exact slice of the file, hinted
// at its first line, always applies there.
func FuzzParseDiff(f *testing.F) {
	f.Add(srBlock(2, "b", "c"), "a\nb\nc\n", uint16(1), uint8(1))
	f.Add("<<<<<<< SEARCH\n:start_line:1\n-------\n\\=======\n=======\nx\n>>>>>>> REPLACE", "=======\r\ny", uint16(0), uint8(2))
	f.Add("=======\n>>>>>>> REPLACE\n<<<<<<< SEARCH", "\t  x\n\n  -------\n", uint16(2), uint8(1))
	f.Add("<<<<<<< SEARCH>\n\n1 | a\n=======\n1 | b\n>>>>>>> REPLACE\n", ":start_line:3\n<<<<<<< HEAD\n\u2028x\r\ry", uint16(1), uint8(3))
	f.Add(srBlock(0, "10 |  ", "10 | z"), "\xff\xfe\u00a0\u2026", uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, diff, file string, at uint16, n uint8) {
		if len(diff) > 4096 || len(file) > 4096 {
			return
		}
		text := decodeUTF8([]byte(file))
		if blocks, err := parseDiff(diff); err == nil {
			if len(blocks) == 0 {
				t.Fatalf("parseDiff(%q) returned no blocks and no error", diff)
			}
			applyBlocks(text, blocks)
		}

		lines := splitJSLines(text)
		i := int(at) % len(lines)
		k := 1 + int(n)%min(8, len(lines)-i)
		search, ok := searchableSlice(lines[i : i+k])
		if !ok {
			return
		}
		d := "<<<<<<< SEARCH\n:start_line:" + strconv.Itoa(i+1) + "\n-------\n" + search + "\n=======\nreplaced\n>>>>>>> REPLACE"
		blocks, err := parseDiff(d)
		if err != nil {
			t.Fatalf("a diff of an exact slice was refused: %v\ndiff %q", err, d)
		}
		rep := applyBlocks(text, blocks)
		if rep.applied != 1 {
			t.Fatalf("an exact slice at its own line did not apply: %+v\nfile %q\ndiff %q", rep.failures, text, d)
		}
		eol := "\n"
		if strings.Contains(text, "\r\n") {
			eol = "\r\n"
		}
		want := strings.Join(append(append(append([]string(nil), lines[:i]...), "replaced"), lines[i+k:]...), eol)
		if rep.content != want {
			t.Fatalf("content %q, want %q\nfile %q\ndiff %q", rep.content, want, text, d)
		}
	})
}

// searchableSlice is the SEARCH text for lines, with markers that start a
// line escaped, or false when the slice cannot be written as a SEARCH
// section: its first line is blank (the white space after a marker line
// absorbs it), a marker is indented (it cannot be escaped), a line already
// looks escaped, or it is the replacement itself.
func searchableSlice(lines []string) (string, bool) {
	if jsTrim(lines[0]) == "" {
		return "", false
	}
	tokens := []string{"<<<<<<<", "=======", ">>>>>>>", "-------", ":end_line:", ":start_line:"}
	out := make([]string, len(lines))
	for j, l := range lines {
		t := jsTrim(l)
		if strings.HasPrefix(t, "<<<<<<<") || strings.HasPrefix(t, ">>>>>>>") || t == "=======" ||
			strings.HasPrefix(t, ":start_line:") || strings.HasPrefix(t, ":end_line:") {
			if t != l && !strings.HasPrefix(l, t) {
				return "", false // indented: the validator sees a marker we cannot escape
			}
		}
		out[j] = l
		for _, tok := range tokens {
			if strings.HasPrefix(l, `\`+tok) {
				return "", false
			}
			if strings.HasPrefix(l, tok) {
				out[j] = `\` + l
				break
			}
		}
	}
	s := strings.Join(out, "\n")
	if s == "replaced" {
		return "", false
	}
	return s, true
}
