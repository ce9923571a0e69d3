package install

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// unifiedDiff is a unified diff (3 lines of context) from a to b, for
// install --dry-run. The line diff itself is go-diff's (already a dependency
// through go-git); only the hunk layout is written here.
func unifiedDiff(nameA, nameB string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(string(a), string(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)

	type line struct {
		op   byte // ' ', '-', '+'
		text string
	}
	var all []line
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		text := d.Text
		for text != "" {
			l, rest, found := strings.Cut(text, "\n")
			if found {
				l += "\n"
			}
			all = append(all, line{op, l})
			text = rest
		}
	}

	const ctx = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for i := 0; i < len(all); {
		if all[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx lines from the previous one.
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(all); j++ {
			if all[j].op != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		end = min(end+ctx, len(all)-1)
		aStart, bStart := 1, 1
		for _, l := range all[:start] {
			if l.op != '+' {
				aStart++
			}
			if l.op != '-' {
				bStart++
			}
		}
		aLen, bLen := 0, 0
		for _, l := range all[start : end+1] {
			if l.op != '+' {
				aLen++
			}
			if l.op != '-' {
				bLen++
			}
		}
		if aLen == 0 {
			aStart--
		}
		if bLen == 0 {
			bStart--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		for _, l := range all[start : end+1] {
			out.WriteByte(l.op)
			out.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end + 1
	}
	return out.String()
}
