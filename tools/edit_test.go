package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// rtWorkspace is a real temporary workspace holding files.
func rtWorkspace(t *testing.T, files map[string]string) *engine.Workspace {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
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

// rtRun runs tool as the engine would, without policies.
func rtRun(t *testing.T, ws *engine.Workspace, tool engine.Tool, name string, args map[string]any) (*engine.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	c := &engine.Call{ID: "c1", Session: "s1", Tool: name, Args: raw, WS: ws}
	return tool.Run(context.Background(), c)
}

func rtRead(t *testing.T, ws *engine.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rtCode(err error) engine.Code {
	if d, ok := engine.AsDenial(err); ok {
		return d.Code
	}
	return ""
}

// The expected contents are what Roo Code's insertGroups and its editor
// (which keeps a final newline) produce for the same input.
func TestInsertContent(t *testing.T) {
	const abc = "a\nb\nc\n"
	for _, tc := range []struct {
		name    string
		file    *string
		line    any
		content string
		want    string
		changed bool
	}{
		{"before the first line", ptr(abc), 1, "x", "x\na\nb\nc\n", true},
		{"before a middle line", ptr(abc), 2, "x\ny", "a\nx\ny\nb\nc\n", true},
		{"line as a string", ptr(abc), "2", "x", "a\nx\nb\nc\n", true},
		{"line as a float", ptr(abc), 2.0, "x", "a\nx\nb\nc\n", true},
		{"append with 0 after a final newline", ptr(abc), 0, "x", "a\nb\nc\n\nx\n", true},
		{"append with 0 without a final newline", ptr("a\nb\nc"), 0, "x", "a\nb\nc\nx", true},
		{"line after the last", ptr(abc), 4, "x", "a\nb\nc\nx\n", true},
		{"line far past the end", ptr(abc), 9, "x", "a\nb\nc\n\nx\n", true},
		{"before the last line without a final newline", ptr("a\nb\nc"), 3, "x", "a\nb\nx\nc", true},
		{"content with a final newline", ptr(abc), 2, "x\n", "a\nx\n\nb\nc\n", true},
		{"empty content inserts an empty line", ptr("a\n"), 1, "", "\na\n", true},
		{"empty file, line 0", ptr(""), 0, "x", "\nx", true},
		{"empty file, line 1", ptr(""), 1, "x", "x\n", true},
		{"new file, line 0", nil, 0, "x", "x", true},
		{"new file, line 1", nil, 1, "x\ny\n", "x\ny\n", true},
		{"CRLF file keeps CRLF", ptr("a\r\nb\r\n"), 2, "x\ny", "a\r\nx\r\ny\r\nb\r\n", true},
		{"CRLF file, append", ptr("a\r\nb\r\n"), 0, "x", "a\r\nb\r\n\r\nx\r\n", true},
		{"CRLF content into an LF file", ptr(abc), 1, "x\r\ny", "x\ny\na\nb\nc\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.file != nil {
				files["f.txt"] = *tc.file
			}
			ws := rtWorkspace(t, files)
			r, err := rtRun(t, ws, InsertContent(), "insert_content", map[string]any{"path": "f.txt", "line": tc.line, "content": tc.content})
			if err != nil {
				t.Fatalf("insert_content: %v", err)
			}
			if got := rtRead(t, ws, "f.txt"); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
			if (len(r.Changes) == 1) != tc.changed {
				t.Fatalf("changes = %+v, want changed=%v", r.Changes, tc.changed)
			}
			ch := r.Changes[0]
			if ch.Path != "f.txt" || string(ch.After) != tc.want || ch.Existed != (tc.file != nil) {
				t.Errorf("change = %+v", ch)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestInsertContentRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  map[string]any
		code  engine.Code
		param string
	}{
		{"no path", nil, map[string]any{"line": 1, "content": "x"}, engine.MissingParameter, "path"},
		{"no line", map[string]string{"f": "a\n"}, map[string]any{"path": "f", "content": "x"}, engine.MissingParameter, "line"},
		{"no content", map[string]string{"f": "a\n"}, map[string]any{"path": "f", "line": 1}, engine.MissingParameter, "content"},
		{"negative line", map[string]string{"f": "a\n"}, map[string]any{"path": "f", "line": -1, "content": "x"}, engine.InvalidArgument, "line"},
		{"fractional line", map[string]string{"f": "a\n"}, map[string]any{"path": "f", "line": 1.5, "content": "x"}, engine.InvalidArgument, "line"},
		{"word as line", map[string]string{"f": "a\n"}, map[string]any{"path": "f", "line": "two", "content": "x"}, engine.InvalidArgument, "line"},
		{"line 2 of a new file", nil, map[string]any{"path": "new.txt", "line": 2, "content": "x"}, engine.InvalidArgument, "line"},
		{"escaping path", nil, map[string]any{"path": "../x", "line": 1, "content": "x"}, engine.PathEscape, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := rtWorkspace(t, tc.files)
			_, err := rtRun(t, ws, InsertContent(), "insert_content", tc.args)
			d, ok := engine.AsDenial(err)
			if !ok || d.Code != tc.code || d.Parameter != tc.param {
				t.Fatalf("err = %v (%+v), want %s naming %q", err, d, tc.code, tc.param)
			}
		})
	}
	ws := rtWorkspace(t, nil)
	if _, err := rtRun(t, ws, InsertContent(), "insert_content", map[string]any{"path": "new.txt", "line": 2, "content": "x"}); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused insert created the file: %v", err)
	}
}

// The expected contents are what Roo Code's search_and_replace (3.x, with
// use_regex, ignore_case and a line range) produces in Node for the same
// input.
func TestSearchAndReplace(t *testing.T) {
	const f = "foo bar\nFoo baz\nfoo.bar\nend\n"
	for _, tc := range []struct {
		name string
		args map[string]any
		want string // "" means unchanged
	}{
		{"literal", map[string]any{"search": "foo", "replace": "qux"}, "qux bar\nFoo baz\nqux.bar\nend\n"},
		{"literal, ignoring case", map[string]any{"search": "foo", "replace": "qux", "ignore_case": true}, "qux bar\nqux baz\nqux.bar\nend\n"},
		{"literal dot is a dot", map[string]any{"search": "foo.bar", "replace": "[$&]"}, "foo bar\nFoo baz\n[foo.bar]\nend\n"},
		{"regex dot is any character", map[string]any{"search": "foo.bar", "replace": "[$&]", "use_regex": true}, "[foo bar]\nFoo baz\n[foo.bar]\nend\n"},
		{"replacement patterns", map[string]any{"search": "f(o+)", "replace": "$1$1 $$ $0 $2 $`|", "use_regex": "true"},
			"oooo $ $0 $2 | bar\nFoo baz\noooo $ $0 $2 foo bar\nFoo baz\n|.bar\nend\n"},
		{"named group", map[string]any{"search": "(?<w>ba[rz])", "replace": "<$<w>>", "use_regex": true}, "foo <bar>\nFoo <baz>\nfoo.<bar>\nend\n"},
		{"literal $ matches a dollar", map[string]any{"search": "$", "replace": "X"}, ""},
		{"line range", map[string]any{"search": "o", "replace": "0", "start_line": 2, "end_line": 3}, "foo bar\nF00 baz\nf00.bar\nend\n"},
		{"^ is the start of the range", map[string]any{"search": "^", "replace": "> ", "use_regex": true, "start_line": 2, "end_line": 3}, "foo bar\n> Foo baz\nfoo.bar\nend\n"},
		{"$ is the end of the range", map[string]any{"search": "$", "replace": "!", "use_regex": true, "start_line": 2, "end_line": 2}, "foo bar\nFoo baz!\nfoo.bar\nend\n"},
		{"joining lines in a range", map[string]any{"search": `\n`, "replace": "", "use_regex": true, "start_line": 1, "end_line": 2}, "foo barFoo baz\nfoo.bar\nend\n"},
		{"empty matches between characters", map[string]any{"search": "x*", "replace": "-", "use_regex": true, "start_line": 4, "end_line": 4}, "foo bar\nFoo baz\nfoo.bar\n-e-n-d-\n"},
		{"a final newline is kept", map[string]any{"search": `end\n$`, "replace": "", "use_regex": true}, "foo bar\nFoo baz\nfoo.bar\n"},
		{"only start_line", map[string]any{"search": "foo", "replace": "X", "start_line": 2}, "foo bar\nFoo baz\nX.bar\nend\n"},
		{"no match", map[string]any{"search": "nothing", "replace": "X"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := rtWorkspace(t, map[string]string{"f.txt": f})
			args := map[string]any{"path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			r, err := rtRun(t, ws, SearchAndReplace(), "search_and_replace", args)
			if err != nil {
				t.Fatalf("search_and_replace: %v", err)
			}
			want := tc.want
			if want == "" {
				want = f
				if len(r.Changes) != 0 || !strings.HasPrefix(r.Output, "No changes needed") {
					t.Errorf("unchanged file reported as %q with %d changes", r.Output, len(r.Changes))
				}
			} else if len(r.Changes) != 1 || string(r.Changes[0].Before) != f || string(r.Changes[0].After) != want {
				t.Errorf("changes = %+v", r.Changes)
			}
			if got := rtRead(t, ws, "f.txt"); got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
		})
	}
}

func TestSearchAndReplaceLineEndings(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{"f.txt": "a\r\nb\r\n"})
	if _, err := rtRun(t, ws, SearchAndReplace(), "search_and_replace",
		map[string]any{"path": "f.txt", "search": "a", "replace": "x\ny"}); err != nil {
		t.Fatal(err)
	}
	if got := rtRead(t, ws, "f.txt"); got != "x\r\ny\r\nb\r\n" {
		t.Errorf("file = %q, want the new line break in CRLF", got)
	}
}

func TestSearchAndReplaceRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  map[string]any
		code  engine.Code
		param string
	}{
		{"no path", map[string]any{"search": "a", "replace": "b"}, engine.MissingParameter, "path"},
		{"no search", map[string]any{"path": "f.txt", "replace": "b"}, engine.MissingParameter, "search"},
		{"empty search", map[string]any{"path": "f.txt", "search": "", "replace": "b"}, engine.MissingParameter, "search"},
		{"no replace", map[string]any{"path": "f.txt", "search": "a"}, engine.MissingParameter, "replace"},
		{"lookahead", map[string]any{"path": "f.txt", "search": "a(?=b)", "replace": "", "use_regex": true}, engine.InvalidArgument, "search"},
		{"backreference", map[string]any{"path": "f.txt", "search": `(a)\1`, "replace": "", "use_regex": true}, engine.InvalidArgument, "search"},
		{"bad regex", map[string]any{"path": "f.txt", "search": "a(", "replace": "", "use_regex": true}, engine.InvalidArgument, "search"},
		{"end before start", map[string]any{"path": "f.txt", "search": "a", "replace": "", "start_line": 3, "end_line": 2}, engine.InvalidArgument, "end_line"},
		{"start past the end", map[string]any{"path": "f.txt", "search": "a", "replace": "", "start_line": 9}, engine.InvalidArgument, "start_line"},
		{"not a boolean", map[string]any{"path": "f.txt", "search": "a", "replace": "", "use_regex": "maybe"}, engine.InvalidArgument, "use_regex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := rtWorkspace(t, map[string]string{"f.txt": "ab\n"})
			_, err := rtRun(t, ws, SearchAndReplace(), "search_and_replace", tc.args)
			d, ok := engine.AsDenial(err)
			if !ok || d.Code != tc.code || d.Parameter != tc.param {
				t.Fatalf("err = %v, want %s naming %q", err, tc.code, tc.param)
			}
			if got := rtRead(t, ws, "f.txt"); got != "ab\n" {
				t.Errorf("file changed to %q", got)
			}
		})
	}
	ws := rtWorkspace(t, nil)
	_, err := rtRun(t, ws, SearchAndReplace(), "search_and_replace", map[string]any{"path": "missing.txt", "search": "a", "replace": "b"})
	if err == nil || rtCode(err) != "" {
		t.Errorf("missing file: err = %v, want a tool error", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "missing.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing file was created")
	}
}
