package tools

import (
	"strings"
	"testing"
)

// Cases worked out by hand from Roo Code's write_to_file preprocessing
// (fence lines dropped independently at the start and the end, then
// everyLineHasLineNumbers / stripLineNumbers).
func TestCleanWriteContent(t *testing.T) {
	cases := []struct {
		name, in     string
		endsNL       bool
		want         string
		fence, lines bool
	}{
		{"fence with language", "```javascript\nLine 1\nLine 2\n```", false, "Line 1\nLine 2", true, false},
		{"bare fence", "```\nx := 1\n```", false, "x := 1", true, false},
		{"numbered", "1 | line one\n2 | line two", false, "line one\nline two", false, true},
		{"empty", "", false, "", false, false},
		{"fence then numbers", "```go\n1 | package a\n2 | \n```", false, "package a\n", true, true},
		{"not every line numbered", "1 | a\nb", false, "1 | a\nb", false, false},
		{"trailing newline: last line has no number", "1 | a\n2 | b\n", false, "1 | a\n2 | b\n", false, false},
		{"double pipe is code", "1 || a\n2 || b", false, "1 || a\n2 || b", false, false},
		{"crlf kept", "1 | a\r\n2 | b", false, "a\r\nb", false, true},
		{"padded and tab", "  9\t| x\n 10 |  y", false, "x\n y", false, true},
		{"no blank after pipe", "1 |a\n2 |b", false, "a\nb", false, true},
		{"keeps final newline of existing file", "x", true, "x\n", false, false},
		{"markdown ending in a fence loses the fence line, as in Roo", "# T\n```sh\nls\n```", false, "# T\n```sh\nls", true, false},
		{"unnumbered text untouched", "package a\n\nfunc A() {}\n", false, "package a\n\nfunc A() {}\n", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, notes := CleanWriteContent(tc.in, tc.endsNL)
			if got != tc.want {
				t.Fatalf("CleanWriteContent(%q) = %q, want %q", tc.in, got, tc.want)
			}
			joined := strings.Join(notes, "\n")
			if strings.Contains(joined, "code fence") != tc.fence || strings.Contains(joined, "line numbers") != tc.lines {
				t.Errorf("notes = %q, want fence=%v lines=%v", notes, tc.fence, tc.lines)
			}
		})
	}
}

func TestWriteFileStripsAndSays(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"old.go": "package old\n"})
	r, err := rtRun(t, ws, WriteFile(), "write_to_file", map[string]any{
		"path": "a.go", "content": "```go\n1 | package a\n2 | \n3 | func A() {}\n```"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rtRead(t, ws, "a.go"); got != "package a\n\nfunc A() {}" {
		t.Errorf("a.go = %q", got)
	}
	if !strings.Contains(r.Output, "code fence") || !strings.Contains(r.Output, "line numbers") {
		t.Errorf("result does not say what was removed: %q", r.Output)
	}
	if string(r.Changes[0].After) != "package a\n\nfunc A() {}" {
		t.Errorf("change records %q, not what was written", r.Changes[0].After)
	}
	r, err = rtRun(t, ws, WriteFile(), "write_to_file", map[string]any{"path": "old.go", "content": "package old2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rtRead(t, ws, "old.go"); got != "package old2\n" {
		t.Errorf("old.go = %q, want its final newline kept", got)
	}
	if strings.Contains(r.Output, "removed") {
		t.Errorf("nothing was removed, yet the result says so: %q", r.Output)
	}
}

func FuzzCleanWriteContent(f *testing.F) {
	for _, s := range []string{"```js\n1 | a\n```", "1 | x\r\n2 | y", "", "```", "1 |", " 1\t|\t"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, nl bool) {
		got, _ := CleanWriteContent(s, nl)
		if len(got) > len(s)+1 {
			t.Fatalf("CleanWriteContent(%q) grew to %q", s, got)
		}
		if !strings.Contains(s, "```") && !EveryLineHasLineNumbers(s) && !nl && got != s {
			t.Fatalf("CleanWriteContent(%q) = %q, changed content that has nothing to strip", s, got)
		}
	})
}

// everyLineHasLineNumbersRef is EveryLineHasLineNumbers as it was, on the
// lines split first.
func everyLineHasLineNumbersRef(content string) bool {
	for _, line := range splitEOL(content) {
		if !numberedLine().MatchString(line) || strings.HasPrefix(line[len(numberedLine().FindString(line)):], "|") {
			return false
		}
	}
	return true
}

func FuzzEveryLineHasLineNumbers(f *testing.F) {
	for _, s := range []string{"", "\n", "1 | a", "1 | a\n", "1 | a\r\n2 | b", "1 | a\n\n2 | b", " 12\t| x\r", "1 || x", "1 | a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := EveryLineHasLineNumbers(s), everyLineHasLineNumbersRef(s); got != want {
			t.Fatalf("EveryLineHasLineNumbers(%q) = %v, reference %v", s, got, want)
		}
	})
}
