package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

func TestSearchFiles(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{
		".gitignore":        "*.gen.go\n",
		"src/a.go":          "package a\n\nfunc A() {\n\treturn\n}\n\nfunc B() {}\n",
		"src/b.ts":          "export function B() {}\r\n",
		"src/x.gen.go":      "func Generated() {}\n",
		"src/.hidden.go":    "func Hidden() {}\n",
		"src/bin.dat":       "func Binary\x00() {}\n",
		"docs/notes.md":     "func in prose\n",
		"src/deep/c.go":     "// func C\n" + strings.Repeat("x", 600) + " func\n",
		".github/ci.yml":    "func: ci\n",
		"node_modules/m.js": "function m() {}\n",
	})
	long := "x" + strings.Repeat("x", 499) + " [truncated...]"
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"grouped by file with context", map[string]any{"path": "src", "regex": `^func \w`},
			"Found 2 results.\n\n# src/a.go\n  2 | \n  3 | func A() {\n  4 | \treturn\n----\n  6 | \n  7 | func B() {}\n----"},
		{"contiguous lines form one result", map[string]any{"path": "src/a.go", "regex": `func|return`},
			"Found 1 result.\n\n# src/a.go\n  2 | \n  3 | func A() {\n  4 | \treturn\n  5 | }\n  6 | \n  7 | func B() {}\n----"},
		{"file pattern by name", map[string]any{"path": ".", "regex": "function", "file_pattern": "*.ts"},
			"Found 1 result.\n\n# src/b.ts\n  1 | export function B() {}\n----"},
		{"file pattern with a directory", map[string]any{"path": ".", "regex": "func", "file_pattern": "src/deep/*.go"},
			"Found 1 result.\n\n# src/deep/c.go\n  1 | // func C\n  2 | " + long + "\n----"},
		{"negated file pattern", map[string]any{"path": "src", "regex": "func", "file_pattern": "!*.go"},
			"Found 1 result.\n\n# src/b.ts\n  1 | export function B() {}\n----"},
		{"everything not hidden, ignored or binary", map[string]any{"path": ".", "regex": "func"},
			"Found 6 results.\n\n# docs/notes.md\n  1 | func in prose\n----\n\n" +
				"# node_modules/m.js\n  1 | function m() {}\n----\n\n" +
				"# src/a.go\n  2 | \n  3 | func A() {\n  4 | \treturn\n----\n  6 | \n  7 | func B() {}\n----\n\n" +
				"# src/b.ts\n  1 | export function B() {}\n----\n\n" +
				"# src/deep/c.go\n  1 | // func C\n  2 | " + long + "\n----"},
		{"no match", map[string]any{"path": ".", "regex": "nothing here"}, "Found 0 results."},
		{"root spelled ./", map[string]any{"path": "./", "regex": "prose"},
			"Found 1 result.\n\n# docs/notes.md\n  1 | func in prose\n----"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rtRun(t, ws, SearchFiles(), "search_files", tc.args)
			if err != nil {
				t.Fatalf("search_files: %v", err)
			}
			if r.Output != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", r.Output, tc.want)
			}
			if len(r.Reads) != 0 {
				t.Errorf("reads = %v; a search is not a whole-file read", r.Reads)
			}
		})
	}
}

func TestSearchFilesLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "hit %d\n\nmiss\n\n", i)
	}
	ws := rtWorkspace(t, map[string]string{"many.txt": b.String()})
	r, err := rtRun(t, ws, SearchFiles(), "search_files", map[string]any{"path": ".", "regex": "hit"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Output, "Showing first 300 of 300+ results. Use a more specific search if necessary.\n\n# many.txt\n") ||
		strings.Count(r.Output, "----") != 300 {
		t.Errorf("output starts %q with %d groups", r.Output[:120], strings.Count(r.Output, "----"))
	}
}

func TestSearchFilesRefuses(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"a.txt": "a\n"})
	for _, tc := range []struct {
		name  string
		args  map[string]any
		code  engine.Code
		param string
	}{
		{"no path", map[string]any{"regex": "a"}, engine.MissingParameter, "path"},
		{"no regex", map[string]any{"path": "."}, engine.MissingParameter, "regex"},
		{"lookahead", map[string]any{"path": ".", "regex": "a(?=b)"}, engine.InvalidArgument, "regex"},
		{"bad glob", map[string]any{"path": ".", "regex": "a", "file_pattern": "[a"}, engine.InvalidArgument, "file_pattern"},
		{"escape", map[string]any{"path": "..", "regex": "a"}, engine.PathEscape, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rtRun(t, ws, SearchFiles(), "search_files", tc.args)
			d, ok := engine.AsDenial(err)
			if !ok || d.Code != tc.code || d.Parameter != tc.param {
				t.Errorf("err = %v, want %s naming %q", err, tc.code, tc.param)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
