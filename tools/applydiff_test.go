package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/intentgate/intentgate/engine"
)

// block builds one SEARCH/REPLACE block; hint 0 leaves out :start_line:.
func srBlock(hint int, search, replace string) string {
	var b strings.Builder
	b.WriteString("<<<<<<< SEARCH\n")
	if hint != 0 {
		fmt.Fprintf(&b, ":start_line:%d\n-------\n", hint)
	}
	b.WriteString(search + "\n=======\n" + replace + "\n>>>>>>> REPLACE")
	return b.String()
}

// numbered is a file of n lines "line1".."lineN", each ending in "\n",
// with some lines replaced.
func numberedFile(n int, with map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := with[i]; ok {
			b.WriteString(s)
		} else {
			fmt.Fprintf(&b, "line%d", i)
		}
		b.WriteString("\n")
	}
	return b.String()
}

type diffCase struct {
	name     string
	original string
	diff     string
	want     string // the new content; ignored when applied is 0
	applied  int    // blocks that applied
	failed   []int  // diff positions of the blocks that failed, in order applied
}

func runDiffCases(t *testing.T, cases []diffCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := parseDiff(tc.diff)
			if err != nil {
				t.Fatalf("parseDiff: %v", err)
			}
			rep := applyBlocks(tc.original, blocks)
			var failed []int
			for _, f := range rep.failures {
				failed = append(failed, f.block.index)
			}
			if rep.applied != tc.applied || fmt.Sprint(failed) != fmt.Sprint(tc.failed) {
				t.Fatalf("applied %d, failed blocks %v; want %d and %v\nfailures: %+v", rep.applied, failed, tc.applied, tc.failed, rep.failures)
			}
			if tc.applied > 0 && rep.content != tc.want {
				t.Errorf("content =\n%q\nwant\n%q", rep.content, tc.want)
			}
		})
	}
}

// Cases taken from Roo Code's own tests of the strategy
// (src/core/diff/strategies/__tests__/multi-search-replace.spec.ts), with
// the expectations those tests state.
func TestApplyDiffRooCases(t *testing.T) {
	runDiffCases(t, []diffCase{
		{
			name:     "plain replacement, text before the first marker ignored",
			original: "function hello() {\n    console.log(\"hello\")\n}\n",
			diff:     "test.ts\n" + srBlock(0, "function hello() {\n    console.log(\"hello\")\n}", "function hello() {\n    console.log(\"hello world\")\n}"),
			want:     "function hello() {\n    console.log(\"hello world\")\n}\n",
			applied:  1,
		},
		{
			name:     "two blocks back to back",
			original: "function hello() {\n    console.log(\"hello\")\n}\n",
			diff: "test.ts\n" + srBlock(0, "function hello() {", "function helloWorld() {") + "\n" +
				srBlock(0, "    console.log(\"hello\")", "    console.log(\"hello world\")"),
			want:    "function helloWorld() {\n    console.log(\"hello world\")\n}\n",
			applied: 2,
		},
		{
			name:     "end_line is accepted and ignored",
			original: "function hello() {\n    console.log(\"hello\")\n}\n",
			diff:     "<<<<<<< SEARCH\n:start_line:1\n:end_line:1\n-------\nfunction hello() {\n=======\nfunction helloWorld() {\n>>>>>>> REPLACE",
			want:     "function helloWorld() {\n    console.log(\"hello\")\n}\n",
			applied:  1,
		},
		{
			name:     "search block without the file's indentation",
			original: "    function test() {\n        return true;\n    }\n",
			diff:     srBlock(0, "function test() {\n    return true;\n}", "function test() {\n    return false;\n}"),
			want:     "    function test() {\n        return false;\n    }\n",
			applied:  1,
		},
		{
			name:     "added line takes the tab indentation of the match",
			original: "\tfunction test() {\n\t\treturn true;\n\t}",
			diff:     srBlock(0, "function test() {\n\treturn true;\n}", "function test() {\n\t// Add comment\n\treturn false;\n}"),
			want:     "\tfunction test() {\n\t\t// Add comment\n\t\treturn false;\n\t}",
			applied:  1,
		},
		{
			name:     "negative indentation relative to the search text",
			original: "class Example {\n    constructor() {\n        if (true) {\n            this.init();\n            this.setup();\n        }\n    }\n}",
			diff:     srBlock(0, "            this.init();\n            this.setup();", "        this.init();\n        this.setup();"),
			want:     "class Example {\n    constructor() {\n        if (true) {\n        this.init();\n        this.setup();\n        }\n    }\n}",
			applied:  1,
		},
		{
			name:     "indentation removed entirely",
			original: "class Example {\n    constructor() {\n        if (true) {\n            this.init();\n        }\n    }\n}",
			diff:     srBlock(0, "            this.init();", "this.init();"),
			want:     "class Example {\n    constructor() {\n        if (true) {\nthis.init();\n        }\n    }\n}",
			applied:  1,
		},
		{
			name:     "middle-out: of five equal candidates the middle one wins",
			original: "function one() {\n    return \"target\";\n}\n\nfunction two() {\n    return \"target\";\n}\n\nfunction three() {\n    return \"target\";\n}\n\nfunction four() {\n    return \"target\";\n}\n\nfunction five() {\n    return \"target\";\n}",
			diff:     srBlock(0, "    return \"target\";", "    return \"updated\";"),
			want:     "function one() {\n    return \"target\";\n}\n\nfunction two() {\n    return \"target\";\n}\n\nfunction three() {\n    return \"updated\";\n}\n\nfunction four() {\n    return \"target\";\n}\n\nfunction five() {\n    return \"target\";\n}",
			applied:  1,
		},
		{
			name:     "smart quotes in the file match straight ones in the diff",
			original: "we can\u2019t wait",
			diff:     srBlock(0, "we can't wait", "we can't wait\n\nYou're still here?"),
			want:     "we can't wait\n\nYou're still here?",
			applied:  1,
		},
		{
			name:     "empty replacement deletes the lines",
			original: "function test() {\n    console.log(\"hello\");\n    // Comment to remove\n    console.log(\"world\");\n}",
			diff:     "<<<<<<< SEARCH\n    // Comment to remove\n=======\n>>>>>>> REPLACE",
			want:     "function test() {\n    console.log(\"hello\");\n    console.log(\"world\");\n}",
			applied:  1,
		},
		{
			name:     "line-numbered search with an empty replacement",
			original: "line 1\nline to delete\nline 3",
			diff:     "\n<<<<<<< SEARCH\n:start_line:2\n-------\n2 | line to delete\n=======\n>>>>>>> REPLACE",
			want:     "line 1\nline 3",
			applied:  1,
		},
		{
			name:     "every line numbered, the last one without a newline",
			original: "line 1\nline 2\nline 3",
			diff:     srBlock(0, "1 | line 1\n2 | line 2\n3 | line 3", "1 | line 1\n2 | modified\n3 | line 3"),
			want:     "line 1\nmodified\nline 3",
			applied:  1,
		},
		{
			name:     "extra > after SEARCH is tolerated",
			original: "a\nb\n",
			diff:     "<<<<<<< SEARCH>\nb\n=======\nc\n>>>>>>> REPLACE",
			want:     "a\nc\n",
			applied:  1,
		},
	})
}

func TestApplyDiffEdgeCases(t *testing.T) {
	runDiffCases(t, []diffCase{
		// Line endings: the file's own, CRLF if it has any.
		{
			name:     "CRLF file stays CRLF, new lines included",
			original: "a\r\nb\r\nc\r\n",
			diff:     srBlock(0, "b", "B\nB2"),
			want:     "a\r\nB\r\nB2\r\nc\r\n",
			applied:  1,
		},
		{
			name:     "a CRLF diff on an LF file",
			original: "a\nb\nc\n",
			diff:     "<<<<<<< SEARCH\r\nb\r\n=======\r\nB\r\n>>>>>>> REPLACE",
			want:     "a\nB\nc\n",
			applied:  1,
		},
		{
			name:     "mixed line endings all become CRLF",
			original: "a\r\nb\nc",
			diff:     srBlock(0, "c", "C"),
			want:     "a\r\nb\r\nC",
			applied:  1,
		},
		{
			name:     "a lone CR stays inside its line",
			original: "a\rb\nc\n",
			diff:     srBlock(0, "c", "C"),
			want:     "a\rb\nC\n",
			applied:  1,
		},
		// Final newlines.
		{
			name:     "no final newline stays without one",
			original: "a\nb",
			diff:     srBlock(0, "b", "c"),
			want:     "a\nc",
			applied:  1,
		},
		{
			// The SEARCH text "b\n" is the lines "b" and "" (the one after
			// the final newline); both are replaced by "c".
			name:     "a SEARCH ending in an empty line takes the final newline with it",
			original: "a\nb\n",
			diff:     "<<<<<<< SEARCH\nb\n\n=======\nc\n>>>>>>> REPLACE",
			want:     "a\nc",
			applied:  1,
		},
		// Empty files.
		{
			name:     "empty file, SEARCH not found",
			original: "",
			diff:     srBlock(0, "x", "y"),
			applied:  0, failed: []int{1},
		},
		{
			// The white space after a marker line runs up to the last
			// newline before text, so blank SEARCH lines never survive.
			name:     "whitespace-only SEARCH text is empty",
			original: "",
			diff:     srBlock(0, "   ", "hello"),
			applied:  0, failed: []int{1},
		},
		{
			// Stripping "1 | " leaves " ", which normalizes to "" like the
			// empty file's only line; the number is the hint.
			name:     "empty file, numbered blank SEARCH matches the empty line",
			original: "",
			diff:     srBlock(0, "1 |  ", "1 | hello"),
			want:     "hello",
			applied:  1,
		},
		{
			name:     "empty SEARCH is refused",
			original: "a\n",
			diff:     "<<<<<<< SEARCH\n=======\nfoo\n>>>>>>> REPLACE",
			applied:  0, failed: []int{1},
		},
		// Tabs and spaces.
		{
			name:     "spaces in the diff, tabs in the file",
			original: "func f() {\n\treturn 1\n}\n",
			diff:     srBlock(0, "    return 1", "    return 2"),
			want:     "func f() {\n\treturn 2\n}\n",
			applied:  1,
		},
		{
			// Matched indent "\t"; the search's base indent is 4 spaces; a
			// line indented 8 spaces keeps the 4 extra ones after the tab.
			name:     "relative indentation is carried over character for character",
			original: "func f() {\n\treturn 1\n}\n",
			diff:     srBlock(0, "    return 1", "    if x {\n        return 2\n    }"),
			want:     "func f() {\n\tif x {\n\t    return 2\n\t}\n}\n",
			applied:  1,
		},
		{
			name:     "tabs in the diff, spaces in the file",
			original: "def f():\n    return 1\n",
			diff:     srBlock(0, "\treturn 1", "\treturn 2\n\t\t# done"),
			want:     "def f():\n    return 2\n    \t# done\n",
			applied:  1,
		},
		{
			// Replacement lines are trimmed at both ends; an empty line gets
			// the matched indentation minus the search's base indentation.
			name:     "trailing white space of replacement lines is dropped",
			original: "x\n        foo\ny\n",
			diff:     srBlock(0, "    foo", "    bar   \n\n    baz"),
			want:     "x\n        bar\n    \n        baz\ny\n",
			applied:  1,
		},
		// Duplicate candidates.
		{
			// 11 lines (the last empty), midpoint 5: candidates 5, 6, 4,
			// ... so index 6 is visited before index 1.
			name:     "of two candidates the one nearer the middle wins",
			original: "a\nx = 1\nb\nc\nd\ne\nx = 1\nf\ng\nh\n",
			diff:     srBlock(0, "x = 1", "x = 2"),
			want:     "a\nx = 1\nb\nc\nd\ne\nx = 2\nf\ng\nh\n",
			applied:  1,
		},
		{
			// Equally far from the midpoint 5: index 6 (tried as mid+1 in
			// the first round) beats index 4 (mid-1, second round).
			name:     "at equal distance the later line wins",
			original: "a\nb\nc\nd\nx\ne\nx\nf\ng\nh\n",
			diff:     srBlock(0, "x", "y"),
			want:     "a\nb\nc\nd\nx\ne\ny\nf\ng\nh\n",
			applied:  1,
		},
		{
			name:     "a hint picks the farther candidate",
			original: numberedFile(100, map[int]string{30: "target", 90: "target"}),
			diff:     srBlock(85, "target", "hit"),
			want:     numberedFile(100, map[int]string{30: "target", 90: "hit"}),
			applied:  1,
		},
		{
			name:     "without a hint the nearer-to-middle candidate wins",
			original: numberedFile(100, map[int]string{30: "target", 90: "target"}),
			diff:     srBlock(0, "target", "hit"),
			want:     numberedFile(100, map[int]string{30: "hit", 90: "target"}),
			applied:  1,
		},
		// Wrong start-line hints: with a hint h the window covers lines
		// h-40 to h+41 (1-based) for a one-line block.
		{
			name:     "hint off by a little",
			original: numberedFile(100, map[int]string{60: "target"}),
			diff:     srBlock(57, "target", "hit"),
			want:     numberedFile(100, map[int]string{60: "hit"}),
			applied:  1,
		},
		{
			name:     "hint 40 lines below the text still finds it",
			original: numberedFile(100, map[int]string{30: "target"}),
			diff:     srBlock(70, "target", "hit"),
			want:     numberedFile(100, map[int]string{30: "hit"}),
			applied:  1,
		},
		{
			name:     "hint 41 lines below the text does not",
			original: numberedFile(100, map[int]string{30: "target"}),
			diff:     srBlock(71, "target", "hit"),
			applied:  0, failed: []int{1},
		},
		{
			name:     "hint 41 lines above the text still finds it",
			original: numberedFile(100, map[int]string{90: "target"}),
			diff:     srBlock(49, "target", "hit"),
			want:     numberedFile(100, map[int]string{90: "hit"}),
			applied:  1,
		},
		{
			name:     "hint 42 lines above the text does not",
			original: numberedFile(100, map[int]string{90: "target"}),
			diff:     srBlock(48, "target", "hit"),
			applied:  0, failed: []int{1},
		},
		{
			name:     "hint past the end of the file",
			original: "a\nb\n",
			diff:     srBlock(500, "b", "c"),
			applied:  0, failed: []int{1},
		},
		{
			// Roo Code slices with JavaScript's rules: the hint's line 10 is
			// past the end, the slice there is empty, the stripped SEARCH " "
			// normalizes to "" too, and the replacement lands after the last
			// line.
			name:     "blank SEARCH with a hint past the end appends",
			original: "a\nb",
			diff:     srBlock(0, "10 |  ", "10 | z"),
			want:     "a\nb\nz",
			applied:  1,
		},
		// Escaped markers.
		{
			name:     "escaped separator in SEARCH matches the file's marker",
			original: "function test() {\n=======\n    return true;\n}",
			diff:     srBlock(0, "function test() {\n\\=======\n    return true;\n}", "function test() {\n    // Updated comment\n    return false;\n}"),
			want:     "function test() {\n    // Updated comment\n    return false;\n}",
			applied:  1,
		},
		{
			name:     "escaped markers in REPLACE are written unescaped",
			original: "function test() {\n    return true;\n}",
			diff:     srBlock(0, "function test() {\n    return true;\n}", "function test() {\n\\=======\n\\<<<<<<< SEARCH\n\\>>>>>>> REPLACE\n    return false;\n}"),
			want:     "function test() {\n=======\n<<<<<<< SEARCH\n>>>>>>> REPLACE\n    return false;\n}",
			applied:  1,
		},
		{
			name:     "resolving a merge conflict",
			original: "function calculate(a, b) {\n<<<<<<< HEAD\n    return a + b;\n=======\n    return a * b;\n>>>>>>> feature-branch\n}",
			diff: srBlock(0, "function calculate(a, b) {\n\\<<<<<<< HEAD\n    return a + b;\n\\=======\n    return a * b;\n\\>>>>>>> feature-branch\n}",
				"function calculate(a, b) {\n    return a * b;\n}"),
			want:    "function calculate(a, b) {\n    return a * b;\n}",
			applied: 1,
		},
		{
			name:     "escaped dashes and line markers",
			original: "-------\n:start_line:3\nx\n",
			diff:     srBlock(0, "\\-------\n\\:start_line:3\nx", "y"),
			want:     "y\n",
			applied:  1,
		},
		{
			name:     "a backslash not before a marker stays",
			original: "a\n\\n\n",
			diff:     srBlock(0, "\\n", "\\t"),
			want:     "a\n\\t\n",
			applied:  1,
		},
		// Line-numbered search text.
		{
			name:     "numbers stripped from both sides",
			original: "a\nb\nc\nd\n",
			diff:     srBlock(0, "2 | b\n3 | c", "2 | B\n3 | C"),
			want:     "a\nB\nC\nd\n",
			applied:  1,
		},
		{
			// Lines 0 and 7 hold "x"; without a hint index 7 is nearer the
			// middle (4) and would win; the number 1 makes it a hint.
			name:     "the first line number becomes the hint",
			original: "x\nq\nq\nq\nq\nq\nq\nx\n",
			diff:     srBlock(0, "1 | x", "1 | z"),
			want:     "z\nq\nq\nq\nq\nq\nq\nx\n",
			applied:  1,
		},
		{
			name:     "bars without numbers go in the second pass",
			original: "a\nb\nc\n",
			diff:     srBlock(0, "| b\n| c", "| B\n| C"),
			want:     "a\nB\nC\n",
			applied:  1,
		},
		{
			name:     "numbers on some lines only go in the second pass",
			original: "a\nb\nc\n",
			diff:     srBlock(0, "2 | b\nc", "2 | B\nC"),
			want:     "a\nB\nC\n",
			applied:  1,
		},
		{
			// "1 || x" is a table row, not a line number.
			name:     "a double bar is content",
			original: "1 || x\n",
			diff:     srBlock(0, "1 || x", "1 || y"),
			want:     "1 || y\n",
			applied:  1,
		},
		// Partial success and order.
		{
			name:     "one block applies, one fails",
			original: "a\nb\nc\n",
			diff:     srBlock(0, "b", "B") + "\n" + srBlock(0, "zzz", "Z"),
			want:     "a\nB\nc\n",
			applied:  1, failed: []int{2},
		},
		{
			name:     "identical SEARCH and REPLACE fail alone",
			original: "a\nb\n",
			diff:     srBlock(0, "a", "a") + "\n" + srBlock(0, "b", "B"),
			want:     "a\nB\n",
			applied:  1, failed: []int{1},
		},
		{
			// Sorted by hint: the block at line 1 goes first and adds two
			// lines, so the hint 5 of the other becomes 7, where l5 now is.
			name:     "blocks apply in ascending start line with the delta",
			original: numberedFile(8, map[int]string{1: "l1", 2: "l2", 3: "l3", 4: "l4", 5: "l5", 6: "l6", 7: "l7", 8: "l8"}),
			diff:     srBlock(5, "l5", "L5") + "\n" + srBlock(1, "l1", "l1\nnew-a\nnew-b"),
			want:     "l1\nnew-a\nnew-b\nl2\nl3\nl4\nL5\nl6\nl7\nl8\n",
			applied:  2,
		},
		{
			// Blocks without a hint sort first (start line 0), so "b" is
			// replaced before the hinted block looks at line 3.
			name:     "blocks without hints go before hinted ones",
			original: "a\nb\nc\nd\n",
			diff:     srBlock(3, "c", "C") + "\n" + srBlock(0, "b", "b1\nb2"),
			want:     "a\nb1\nb2\nC\nd\n",
			applied:  2,
		},
		// Normalization.
		{
			name:     "dashes, ellipsis and no-break spaces",
			original: "say \u201chi\u201d \u2014 ok\u2026 a\u00a0b\n",
			diff:     srBlock(0, "say \"hi\" - ok... a b", "said"),
			want:     "said\n",
			applied:  1,
		},
		{
			name:     "unicode white space collapses",
			original: "a\u3000\u3000b  c\n",
			diff:     srBlock(0, "a b\tc", "d"),
			want:     "d\n",
			applied:  1,
		},
		{
			name:     "astral characters pass through",
			original: "emoji 😀 here\n",
			diff:     srBlock(0, "emoji 😀 here", "emoji 🎉 there"),
			want:     "emoji 🎉 there\n",
			applied:  1,
		},
		// The block grammar.
		{
			name:     "blank lines after the markers are not part of the text",
			original: "x\nfoo\ny\n",
			diff:     "<<<<<<< SEARCH\n\nfoo\n=======\n\nbar\n>>>>>>> REPLACE",
			want:     "x\nbar\ny\n",
			applied:  1,
		},
		{
			name:     "a blank line before REPLACE is part of the text",
			original: "x\nfoo\ny\n",
			diff:     "<<<<<<< SEARCH\nfoo\n=======\nbar\n\n>>>>>>> REPLACE",
			want:     "x\nbar\n\ny\n",
			applied:  1,
		},
		{
			name:     "a start line with spaces around the number",
			original: "a\nb\n",
			diff:     "<<<<<<< SEARCH\n:start_line:  2  \n-------\nb\n=======\nc\n>>>>>>> REPLACE",
			want:     "a\nc\n",
			applied:  1,
		},
		{
			name:     "the ------- line is optional after a start line",
			original: "a\nb\n",
			diff:     "<<<<<<< SEARCH\n:start_line:2\nb\n=======\nc\n>>>>>>> REPLACE",
			want:     "a\nc\n",
			applied:  1,
		},
	})
}

func TestParseDiffRefusesMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, diff string
		says       []string
	}{
		{"separator before any SEARCH", "=======\nx\n>>>>>>> REPLACE",
			[]string{"malformed", "separators (=======): 1", "<<<<<<< SEARCH\n:start_line:"}},
		{"two separators in a row", "<<<<<<< SEARCH\nx\n=======\n=======\n>>>>>>> REPLACE",
			[]string{"lines 3 and 4 are both separators"}},
		{"missing separator", "<<<<<<< SEARCH\nx\n>>>>>>> REPLACE",
			[]string{"line 3", "'>>>>>>> REPLACE' where '=======' was expected", "=======\n[the text to put in its place]"}},
		{"second separator inside REPLACE", "<<<<<<< SEARCH\na\n=======\nb\n=======\nc\n>>>>>>> REPLACE",
			[]string{"line 5", "escape it with a backslash", "\\=======    <-- escaped"}},
		{"second separator and no REPLACE", "<<<<<<< SEARCH\na\n=======\nb\n=======\nc",
			[]string{"line 5", "'=======' where '>>>>>>> REPLACE' was expected"}},
		{"bare conflict marker", "<<<<<<< SEARCH\ncontent\n>>>>>>>",
			[]string{"line 3", "'>>>>>>>' appears inside a block"}},
		{"merge conflict start", "<<<<<<< HEAD\nours",
			[]string{"line 1", "'<<<<<<< HEAD'"}},
		{"a whole conflict is taken for mangled markers", "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> branch",
			[]string{"malformed", "- SEARCH markers: 0"}},
		{"SEARCH twice", "<<<<<<< SEARCH\na\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE",
			[]string{"line 3", "where '=======' was expected"}},
		{"REPLACE before SEARCH", ">>>>>>> REPLACE\n",
			[]string{"line 1", "where '<<<<<<< SEARCH' was expected"}},
		{"two > after SEARCH", "<<<<<<< SEARCH>>\na\n=======\nb\n>>>>>>> REPLACE",
			[]string{"line 1", "'<<<<<<< SEARCH>>'"}},
		{"start_line in REPLACE", "<<<<<<< SEARCH\na\n=======\n:start_line:5\nb\n>>>>>>> REPLACE",
			[]string{"line 4", "\":start_line:\" is in a REPLACE section", "Correct:\n<<<<<<< SEARCH\n:start_line:5"}},
		{"end_line in REPLACE", "<<<<<<< SEARCH\na\n=======\n  :end_line:5\n>>>>>>> REPLACE",
			[]string{"line 4", "\":end_line:\""}},
		{"ends after SEARCH", "<<<<<<< SEARCH\nx",
			[]string{"'=======' separating SEARCH from REPLACE was not found"}},
		{"ends after the separator", "<<<<<<< SEARCH\nx\n=======\ny",
			[]string{"'>>>>>>> REPLACE' was not found"}},
		{"no blocks at all", "just some text",
			[]string{"no complete SEARCH/REPLACE block", "<<<<<<< SEARCH\n:start_line:"}},
		{"markers not in the first column", "  <<<<<<< SEARCH\n  x\n  =======\n  y\n  >>>>>>> REPLACE",
			[]string{"first column"}},
		{"REPLACE glued to text", "<<<<<<< SEARCH\nx\n=======\ny>>>>>>> REPLACE",
			[]string{"'>>>>>>> REPLACE' was not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := parseDiff(tc.diff)
			var fe *diffFormatError
			if !errors.As(err, &fe) {
				t.Fatalf("parseDiff(%q) = %v, %v; want a format error", tc.diff, blocks, err)
			}
			for _, s := range tc.says {
				if !strings.Contains(fe.Error(), s) {
					t.Errorf("error %q\ndoes not say %q", fe.Error(), s)
				}
			}
		})
	}
}

func TestParseDiffBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, diff string
		want       []diffBlock
	}{
		{"hints and texts", srBlock(7, "a\nb", "c") + "\n\n" + srBlock(0, "d", ""),
			[]diffBlock{{1, 7, "a\nb", "c"}, {2, 0, "d", ""}}},
		{"escaped markers stay escaped until applied", srBlock(0, "\\=======", "\\>>>>>>> REPLACE"),
			[]diffBlock{{1, 0, "\\=======", "\\>>>>>>> REPLACE"}}},
		{"a huge start line is a float, as in JavaScript", srBlock(0, "x", "y")[:15] + ":start_line:123456789012345678901234567890\n" + "x\n=======\ny\n>>>>>>> REPLACE",
			[]diffBlock{{1, 1.2345678901234568e29, "x", "y"}}},
		{"text between blocks is ignored", "intro\n" + srBlock(0, "a", "b") + "\nbetween\n" + srBlock(0, "c", "d") + "\noutro",
			[]diffBlock{{1, 0, "a", "b"}, {2, 0, "c", "d"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDiff(tc.diff)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("parseDiff(%q) =\n%+v\nwant\n%+v", tc.diff, got, tc.want)
			}
		})
	}
}

func TestSimilarityCountsUTF16(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"abc", "abc", 1},
		{"abc", "abd", 1 - 1.0/3},
		// U+1F600 is two UTF-16 code units: distance 2 over length 3.
		{"a😀", "a", 1 - 2.0/3},
		{"😀", "😁", 1 - 1.0/2}, // the pairs share their high surrogate
		{"“x”", "\"x\"", 1},   // normalized first
		{"kitten", "sitting", 1 - 3.0/7},
	} {
		a := utf16.Encode([]rune(normalizeText(tc.a)))
		b := utf16.Encode([]rune(normalizeText(tc.b)))
		if got := similarity16(a, b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("similarity(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The closest-match report: "a😀" against "a" is 33% similar in UTF-16
// code units (it would be 50% counted in code points).
func TestFailureReportsClosestMatch(t *testing.T) {
	blocks, err := parseDiff(srBlock(0, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	rep := applyBlocks("a😀\n", blocks)
	if rep.applied != 0 || len(rep.failures) != 1 {
		t.Fatalf("applied %d, failures %+v", rep.applied, rep.failures)
	}
	got := rep.failures[0].describe()
	for _, want := range []string{"33% similar", "Closest match found (33% similar):\n1 | a😀\n", "Searched the whole file"} {
		if !strings.Contains(got, want) {
			t.Errorf("failure %q\ndoes not say %q", got, want)
		}
	}
}

func naiveLevenshtein(a, b []uint16) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestLevenshteinMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		alpha := 2 + r.Intn(5)
		mk := func() []uint16 {
			s := make([]uint16, r.Intn(200))
			for k := range s {
				s[k] = uint16('a' + r.Intn(alpha))
			}
			return s
		}
		a, b := mk(), mk()
		if got, want := levenshtein(a, b), naiveLevenshtein(a, b); got != want {
			t.Fatalf("levenshtein(%q, %q) = %d, want %d", string(utf16.Decode(a)), string(utf16.Decode(b)), got, want)
		}
	}
}

func TestJSHelpers(t *testing.T) {
	lines := []string{"a", "b", "c", "d"}
	for _, tc := range []struct {
		start, end float64
		want       string
	}{
		{0, 2, "a b"}, {-2, math.Inf(1), "c d"}, {-10, 1, "a"}, {3, 1, ""},
		{2, 100, "c d"}, {math.Inf(1), math.Inf(1), ""}, {math.NaN(), 1, "a"},
	} {
		if got := strings.Join(jsSlice(lines, tc.start, tc.end), " "); got != tc.want {
			t.Errorf("jsSlice(%v, %v) = %q, want %q", tc.start, tc.end, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"  a   b \n\t c  ":       "a b c",
		"\u2018x\u2019 \u2013 y": "'x' - y",
		"\ufeffa\u2028b":         "a b",
		"\u0085x":                "\u0085x", // NEL is not white space in JavaScript
	} {
		if got := normalizeText(in); got != want {
			t.Errorf("normalizeText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"\\=======\nx\\=======\n\\:start_line:1": "=======\nx\\=======\n:start_line:1",
		"a\r\\>>>>>>> b":                         "a\r>>>>>>> b",
		"a\u2028\\<<<<<<< b":                     "a\u2028<<<<<<< b",
		"\\\\=======":                            "\\\\=======",
	} {
		if got := unescapeMarkers(in); got != want {
			t.Errorf("unescapeMarkers(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		in         string
		aggressive bool
		want       string
	}{
		{"1 | a\n22 |  b\n 3  |c", false, "a\n b\nc"},
		{"1 | a\r\n2 | b\r\n", false, "a\r\nb\r\n"},
		{"1 | a\nb", false, "a\nb"},
		{"1 || a", false, "1 || a"},
		{"1 | a\rb", false, "1 | a\rb"}, // "." does not cross a CR
		{"| a\n  | b\n3 | c\n3  | d\nx|y", true, "a\nb\nc\n3  | d\nx|y"},
		{"|a", true, "|a"},
	} {
		if got := stripLineNumbers(tc.in, tc.aggressive); got != tc.want {
			t.Errorf("stripLineNumbers(%q, %v) = %q, want %q", tc.in, tc.aggressive, got, tc.want)
		}
	}
	for in, want := range map[string]bool{"1 | a\n2 | b": true, "1 | a\n": false, "": false, "x | a": false, " 12\t|x": true} {
		if got := everyLineNumbered(in); got != want {
			t.Errorf("everyLineNumbered(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestDecodeUTF8LikeNode(t *testing.T) {
	const r = "\uFFFD"
	for in, want := range map[string]string{
		"plain \ufeffbom":          "plain \ufeffbom",
		"a\xffb":                   "a" + r + "b",
		"\xe2\x82A":                r + "A", // one replacement for the truncated sequence
		"\xf0\x9f\x98":             r,
		"\xc0\x80":                 r + r, // C0 never starts a sequence
		"\xed\xa0\x80":             r + r + r,
		"\xf4\x90\x80\x80":         r + r + r + r,
		"ok \xe2\x82\xac \xf0\x9f": "ok € " + r,
	} {
		if got := decodeUTF8([]byte(in)); got != want {
			t.Errorf("decodeUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---------------------------------------------------------------------------
// The tool, on a real workspace.

func diffWS(t *testing.T, files map[string]string) *engine.Workspace {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := engine.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func callApplyDiff(t *testing.T, ws *engine.Workspace, args map[string]any) (*engine.Call, *engine.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	c := &engine.Call{ID: "1", Session: "s", Tool: "apply_diff", Args: raw, WS: ws}
	r, err := ApplyDiff().Run(context.Background(), c)
	return c, r, err
}

func readDiffWS(t *testing.T, ws *engine.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(ws.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyDiffTool(t *testing.T) {
	ws := diffWS(t, map[string]string{
		"src/a.go":   "package a\n\nfunc A() int {\n\treturn 1\n}\n",
		"src/win.go": "package a\r\n\r\nvar x = 1\r\n",
	})

	t.Run("applies and reports the change", func(t *testing.T) {
		_, r, err := callApplyDiff(t, ws, map[string]any{"path": "src/a.go", "diff": srBlock(4, "\treturn 1", "\treturn 2")})
		if err != nil {
			t.Fatalf("apply_diff: %v", err)
		}
		want := "package a\n\nfunc A() int {\n\treturn 2\n}\n"
		if got := readDiffWS(t, ws, "src/a.go"); got != want {
			t.Errorf("file = %q, want %q", got, want)
		}
		if len(r.Changes) != 1 || r.Changes[0].Path != "src/a.go" || !r.Changes[0].Existed ||
			string(r.Changes[0].Before) != "package a\n\nfunc A() int {\n\treturn 1\n}\n" || string(r.Changes[0].After) != want {
			t.Errorf("changes = %+v", r.Changes)
		}
		if !strings.Contains(r.Output, "src/a.go was modified") || !strings.Contains(r.Output, "several SEARCH/REPLACE blocks") {
			t.Errorf("output = %q", r.Output)
		}
	})

	t.Run("CRLF preserved on disk", func(t *testing.T) {
		_, _, err := callApplyDiff(t, ws, map[string]any{"path": "src/win.go", "diff": srBlock(0, "var x = 1", "var x = 2\nvar y = 3")})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readDiffWS(t, ws, "src/win.go"), "package a\r\n\r\nvar x = 2\r\nvar y = 3\r\n"; got != want {
			t.Errorf("file = %q, want %q", got, want)
		}
	})

	t.Run("partial success names the failed block", func(t *testing.T) {
		diff := srBlock(0, "package a", "package b") + "\n" + srBlock(0, "func Missing() {}", "func Found() {}")
		_, r, err := callApplyDiff(t, ws, map[string]any{"path": "src/a.go", "diff": diff})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"only 1 of 2", "Block 2", "not found", "read_file"} {
			if !strings.Contains(r.Output, want) {
				t.Errorf("output %q lacks %q", r.Output, want)
			}
		}
		if got := readDiffWS(t, ws, "src/a.go"); !strings.HasPrefix(got, "package b\n") {
			t.Errorf("file = %q", got)
		}
	})

	t.Run("total failure is a tool error and changes nothing", func(t *testing.T) {
		before := readDiffWS(t, ws, "src/a.go")
		_, r, err := callApplyDiff(t, ws, map[string]any{"path": "src/a.go", "diff": srBlock(2, "func A() int {\n\treturn 3", "x")})
		if err == nil || r != nil {
			t.Fatalf("apply_diff = %v, %v; want an error", r, err)
		}
		if _, denied := engine.AsDenial(err); denied {
			t.Errorf("a block that does not match is a tool error, got a denial: %v", err)
		}
		for _, want := range []string{"changed nothing", "Block 1 (:start_line:2)", "at line 2", "Closest match found (", "3 | func A() int {"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if got := readDiffWS(t, ws, "src/a.go"); got != before {
			t.Errorf("file changed to %q", got)
		}
	})

	t.Run("malformed diff is INVALID_ARGUMENT with the format", func(t *testing.T) {
		_, _, err := callApplyDiff(t, ws, map[string]any{"path": "src/a.go", "diff": "<<<<<<< SEARCH\nx\n>>>>>>> REPLACE"})
		d, ok := engine.AsDenial(err)
		if !ok || d.Code != engine.InvalidArgument || d.Parameter != "diff" || !strings.Contains(d.Message, diffFormat) {
			t.Fatalf("err = %v, want INVALID_ARGUMENT on diff showing the format", err)
		}
	})

	t.Run("missing parameters", func(t *testing.T) {
		for _, tc := range []struct {
			args  map[string]any
			param string
		}{
			{map[string]any{"diff": srBlock(0, "a", "b")}, "path"},
			{map[string]any{"path": "src/a.go"}, "diff"},
			{map[string]any{"path": "src/a.go", "diff": ""}, "diff"},
		} {
			_, _, err := callApplyDiff(t, ws, tc.args)
			if d, ok := engine.AsDenial(err); !ok || d.Code != engine.MissingParameter || d.Parameter != tc.param {
				t.Errorf("apply_diff(%v) = %v, want MISSING_PARAMETER %s", tc.args, err, tc.param)
			}
		}
	})

	t.Run("a missing file is an error and creates nothing", func(t *testing.T) {
		_, _, err := callApplyDiff(t, ws, map[string]any{"path": "src/new/b.go", "diff": srBlock(0, "a", "b")})
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("err = %v", err)
		}
		if _, denied := engine.AsDenial(err); denied {
			t.Errorf("want a tool error, got a denial")
		}
		if _, err := os.Stat(ws.Abs("src/new")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("apply_diff created src/new: %v", err)
		}
	})

	t.Run("stale precondition refuses under the lock", func(t *testing.T) {
		before := readDiffWS(t, ws, "src/a.go")
		raw, _ := json.Marshal(map[string]any{"path": "src/a.go", "diff": srBlock(0, "package b", "package c")})
		c := &engine.Call{ID: "1", Session: "s", Tool: "apply_diff", Args: raw, WS: ws}
		c.SetExpect("src/a.go", engine.Hash([]byte("something else")))
		_, err := ApplyDiff().Run(context.Background(), c)
		if !errors.Is(err, engine.ErrStale) {
			t.Fatalf("err = %v, want STALE_FILE", err)
		}
		if got := readDiffWS(t, ws, "src/a.go"); got != before {
			t.Errorf("file changed to %q", got)
		}
	})

	t.Run("ill-formed UTF-8 is read as Node reads it", func(t *testing.T) {
		ws := diffWS(t, map[string]string{"f.txt": "a\xffb\nc\n"})
		if _, _, err := callApplyDiff(t, ws, map[string]any{"path": "f.txt", "diff": srBlock(0, "c", "d")}); err != nil {
			t.Fatal(err)
		}
		if got, want := readDiffWS(t, ws, "f.txt"), "a\uFFFDb\nd\n"; got != want {
			t.Errorf("file = %q, want %q", got, want)
		}
	})
}
