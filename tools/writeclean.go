package tools

import (
	"regexp"
	"strings"
	"sync"
)

// Weaker models wrap a file in a markdown code fence or copy read_file's
// "N | " line numbers into what they write. Roo Code removes both before
// writing; so does write_to_file, and it tells the model it did.

var (
	// numberedLine is a line that carries a read_file number: digits, at
	// least one blank, then a single pipe (a "||" is code, not a number).
	numberedLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\d+\s+\|`) })
)

// CleanWriteContent returns content as write_to_file writes it, and notes
// naming what was removed. As in Roo Code: a first line that opens a code
// fence ("```" with or without a language) is dropped, and so is a last line
// when the content ends with "```"; then, when every line carries a line
// number, the numbers are stripped. existingEndsWithNewline keeps a file's
// final newline when the new content lacks one, as Roo's editor does.
func CleanWriteContent(content string, existingEndsWithNewline bool) (string, []string) {
	var notes []string
	fenced := false
	if strings.HasPrefix(content, "```") {
		if i := strings.IndexByte(content, '\n'); i >= 0 {
			content = content[i+1:]
		} else {
			content = ""
		}
		fenced = true
	}
	if strings.HasSuffix(content, "```") {
		if i := strings.LastIndexByte(content, '\n'); i >= 0 {
			content = content[:i]
		} else {
			content = ""
		}
		fenced = true
	}
	if fenced {
		notes = append(notes, "The markdown code fence around the content was removed; write_to_file takes the file's exact content.")
	}
	if EveryLineHasLineNumbers(content) {
		content = StripLineNumbers(content)
		notes = append(notes, `The "N | " line numbers at the start of every line were removed; they come from read_file and are not part of a file.`)
	}
	if existingEndsWithNewline && content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return content, notes
}

// EveryLineHasLineNumbers reports whether each line (split on "\n" or
// "\r\n") starts with a read_file line number.
func EveryLineHasLineNumbers(content string) bool {
	// Line by line as splitEOL cuts them, without splitting first: the
	// first line of nearly every content already answers.
	for {
		i := strings.IndexByte(content, '\n')
		line := content
		if i >= 0 {
			line = strings.TrimSuffix(content[:i], "\r")
		}
		if !numberedLine().MatchString(line) || strings.HasPrefix(line[len(numberedLine().FindString(line)):], "|") {
			return false
		}
		if i < 0 {
			return true
		}
		content = content[i+1:]
	}
}

// StripLineNumbers removes a line number and the one character after its
// pipe (the blank read_file puts there) from every line that has one, and
// joins the lines with the content's own line ending.
func StripLineNumbers(content string) string {
	lines := splitEOL(content)
	for i, line := range lines {
		m := numberedLine().FindString(line)
		if m == "" || strings.HasPrefix(line[len(m):], "|") {
			continue
		}
		rest := line[len(m):]
		if rest != "" && strings.ContainsRune(" \t\v\f", rune(rest[0])) {
			rest = rest[1:]
		}
		lines[i] = rest
	}
	eol := "\n"
	if strings.Contains(content, "\r\n") {
		eol = "\r\n"
	}
	return strings.Join(lines, eol)
}

func splitEOL(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i < len(lines)-1 {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	return lines
}
