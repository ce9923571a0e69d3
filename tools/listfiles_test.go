package tools

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// The order Node gives with Roo Code's formatFilesList comparator.
func TestFormatFileListOrder(t *testing.T) {
	in := []string{"src/", "src/a.go", "README.md", "a10.txt", "a2.txt", "A3.txt", "b.txt", "_x", "-y", ".z",
		"src/sub/", "src/sub/b.txt", "src/B.go", "Zeta/", "zeta.md", "x-1", "x_1", "x.1", "x1", "file10", "file9",
		"e.txt", "é.txt", "f.txt"}
	want := []string{"_x", "-y", ".z", "a2.txt", "A3.txt", "a10.txt", "b.txt", "e.txt", "é.txt", "f.txt", "file9",
		"file10", "README.md", "x_1", "x-1", "x.1", "x1", "zeta.md", "src/", "src/a.go", "src/B.go", "src/sub/",
		"src/sub/b.txt", "Zeta/"}
	if got := formatFileList(in, false); got != strings.Join(want, "\n") {
		t.Errorf("order:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func listWS(t *testing.T) *engine.Workspace {
	return rtWorkspace(t, map[string]string{
		".gitignore":              "*.log\nbuild/\n",
		".env":                    "X=1\n",
		"README.md":               "r\n",
		"app.log":                 "l\n",
		"build/out.js":            "o\n",
		"node_modules/m/i.js":     "m\n",
		".github/workflows/ci":    "c\n",
		".git/config":             "g\n",
		"src/a.go":                "a\n",
		"src/.gitignore":          "gen/\n",
		"src/gen/x.go":            "x\n",
		"src/sub/b.go":            "b\n",
		"src/sub/debug.log":       "d\n",
		"target/dependency/d.jar": "j\n",
		"target/classes/C.class":  "c\n",
		"empty/.keep":             "",
	})
}

func TestListFiles(t *testing.T) {
	ws := listWS(t)
	if err := os.Mkdir(filepath.Join(ws.Dir, "void"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		opts ListOptions
		want string
	}{
		// One level: the gitignored app.log shows, the gitignored build/ does not.
		{"root", map[string]any{"path": "."}, ListOptions{},
			".env\n.gitignore\napp.log\nREADME.md\n.github/\nempty/\nsrc/\ntarget/\nvoid/"},
		{"root, recursive", map[string]any{"path": ".", "recursive": true}, ListOptions{},
			".env\n.gitignore\nREADME.md\n.github/\nempty/\nempty/.keep\nsrc/\nsrc/.gitignore\nsrc/a.go\nsrc/sub/\nsrc/sub/b.go\n" +
				"target/\ntarget/classes/\ntarget/classes/C.class\nvoid/"},
		{"recursive as a string", map[string]any{"path": "", "recursive": "true"}, ListOptions{},
			".env\n.gitignore\nREADME.md\n.github/\nempty/\nempty/.keep\nsrc/\nsrc/.gitignore\nsrc/a.go\nsrc/sub/\nsrc/sub/b.go\n" +
				"target/\ntarget/classes/\ntarget/classes/C.class\nvoid/"},
		{"a directory with a trailing slash", map[string]any{"path": "src/"}, ListOptions{}, ".gitignore\na.go\nsub/"},
		{"an absolute path", map[string]any{"path": filepath.Join(ws.Dir, "src")}, ListOptions{}, ".gitignore\na.go\nsub/"},
		{"the root, absolutely", map[string]any{"path": ws.Dir + string(filepath.Separator)}, ListOptions{},
			".env\n.gitignore\napp.log\nREADME.md\n.github/\nempty/\nsrc/\ntarget/\nvoid/"},
		{"a hidden directory is listed in full", map[string]any{"path": ".github", "recursive": true}, ListOptions{},
			"workflows/\nworkflows/ci"},
		{"an ignored directory named explicitly", map[string]any{"path": "node_modules", "recursive": true}, ListOptions{},
			"m/\nm/i.js"},
		{"a gitignored directory named explicitly", map[string]any{"path": "build"}, ListOptions{}, "out.js"},
		{"an empty directory", map[string]any{"path": "void"}, ListOptions{}, "No files found."},
		{"the limit: files first", map[string]any{"path": "."}, ListOptions{Limit: 3},
			".env\n.gitignore\nREADME.md\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"},
		{"the limit: then directories", map[string]any{"path": "."}, ListOptions{Limit: 5},
			".env\n.gitignore\napp.log\nREADME.md\n.github/\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"},
		{"the limit, recursive: first-level directories first", map[string]any{"path": ".", "recursive": true}, ListOptions{Limit: 3},
			".github/\nempty/\nsrc/\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"},
		{"the limit, recursive", map[string]any{"path": "src", "recursive": true}, ListOptions{Limit: 3},
			".gitignore\na.go\nsub/\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rtRun(t, ws, ListFiles(tc.opts), "list_files", tc.args)
			if err != nil {
				t.Fatalf("list_files: %v", err)
			}
			if r.Output != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", r.Output, tc.want)
			}
			if len(r.Reads) != 0 || len(r.Changes) != 0 {
				t.Errorf("reads %v, changes %v", r.Reads, r.Changes)
			}
		})
	}
}

func TestListFilesRefuses(t *testing.T) {
	ws := listWS(t)
	for _, tc := range []struct {
		name string
		args map[string]any
		code engine.Code
	}{
		{"no path", map[string]any{}, engine.MissingParameter},
		{"parent", map[string]any{"path": "../"}, engine.PathEscape},
		{"outside, absolutely", map[string]any{"path": filepath.Dir(ws.Dir)}, engine.PathEscape},
		{"a file", map[string]any{"path": "README.md"}, engine.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rtRun(t, ws, ListFiles(ListOptions{}), "list_files", tc.args)
			if rtCode(err) != tc.code {
				t.Errorf("err = %v, want %s", err, tc.code)
			}
		})
	}
	if _, err := rtRun(t, ws, ListFiles(ListOptions{}), "list_files", map[string]any{"path": "nope"}); err == nil {
		t.Error("a missing directory is listed")
	}
}

func TestListFilesDoesNotFollowLinksOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := rtWorkspace(t, map[string]string{"a.txt": "a"})
	if err := os.Symlink(outside, filepath.Join(ws.Dir, "out")); err != nil {
		t.Fatal(err)
	}
	r, err := rtRun(t, ws, ListFiles(ListOptions{}), "list_files", map[string]any{"path": ".", "recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(r.Output, "\n"); !slices.Equal(got, []string{"a.txt", "out"}) || strings.Contains(r.Output, "secret") {
		t.Errorf("output = %q, want the link listed by name and not followed", r.Output)
	}
	if _, err := rtRun(t, ws, ListFiles(ListOptions{}), "list_files", map[string]any{"path": "out"}); rtCode(err) != engine.PathEscape {
		t.Errorf("listing through the link: err = %v, want PATH_ESCAPE", err)
	}
}
