package tools

import (
	"regexp"
	"strings"
	"sync"
)

// pyLine is one logical line of Python source: where it starts and ends
// (1-based, continuation lines included), its indentation and its text.
type pyLine struct {
	first, last int
	indent      int
	text        string
}

var pyDef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:async\s+def|def|class)\s+[A-Za-z_\p{L}][\w\p{L}]*`)
})

// pyDefinitions finds the classes and functions of a Python file, methods
// and nested functions included. A decorated definition is listed twice, as
// Roo Code's tree-sitter query lists it: from its first decorator and from
// its def or class line.
func pyDefinitions(src string) []definition {
	lines := pyLogicalLines(src)
	var defs []definition
	for i, l := range lines {
		if !pyDef().MatchString(l.text) {
			continue
		}
		end := l.last
		for _, m := range lines[i+1:] {
			if m.indent <= l.indent {
				break
			}
			end = m.last
		}
		defs = append(defs, definition{l.first, end})
		first := i
		for first > 0 && strings.HasPrefix(lines[first-1].text, "@") && lines[first-1].indent == l.indent {
			first--
		}
		if first < i {
			defs = append(defs, definition{lines[first].first, end})
		}
	}
	return defs
}

// pyLogicalLines splits src into logical lines, leaving out blank and
// comment-only lines: a line ends where no bracket, string or backslash
// continues it.
func pyLogicalLines(src string) []pyLine {
	var out []pyLine
	lines := strings.Split(src, "\n")
	depth := 0
	quote := "" // the open triple quote, if any
	var cur *pyLine
	for n, raw := range lines {
		line := strings.TrimSuffix(raw, "\r")
		if cur == nil {
			trimmed := strings.TrimLeft(line, " \t\f")
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			cur = &pyLine{first: n + 1, indent: pyIndent(line), text: trimmed}
		}
		cur.last = n + 1
		cont := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			if quote != "" {
				if c == '\\' {
					i++
				} else if strings.HasPrefix(line[i:], quote) {
					i += len(quote) - 1
					quote = ""
				}
				continue
			}
			switch c {
			case '#':
				i = len(line)
			case '\\':
				if i == len(line)-1 {
					cont = true
				}
				i++
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			case '\'', '"':
				q := string(c)
				if strings.HasPrefix(line[i:], q+q+q) {
					quote = q + q + q
					i += 2
					continue
				}
				j := i + 1
				for j < len(line) && line[j] != c {
					if line[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(line) && strings.HasSuffix(line, "\\") {
					cont = true
				}
				i = j
			}
		}
		if quote == "" && depth == 0 && !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// pyIndent is the width of a line's indentation, tabs to multiples of 8.
func pyIndent(line string) int {
	w := 0
	for _, c := range line {
		switch c {
		case ' ':
			w++
		case '\t':
			w = w/8*8 + 8
		case '\f':
			w = 0
		default:
			return w
		}
	}
	return w
}
