package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// deepWS makes a workspace holding a chain of depth nested directories
// "d/d/.../d", with a .gitignore at the root and one at depth/2, and the
// files named in files (relative to the deepest directory).
func deepWS(tb testing.TB, depth int, files map[string]string) (*engine.Workspace, string) {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\nnode_modules\nbuild/\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	// Build the chain one level at a time through a handle, so that it
	// can go deeper than PATH_MAX.
	cur, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	deepest := ""
	for i := 0; i < depth; i++ {
		if err := cur.Mkdir("d", 0o755); err != nil {
			tb.Fatal(err)
		}
		next, err := cur.OpenRoot("d")
		if err != nil {
			tb.Fatal(err)
		}
		cur.Close()
		cur = next
		deepest = joinRel(deepest, "d")
		if i == depth/2 {
			if err := cur.WriteFile(".gitignore", []byte("skipped.txt\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
			if err := cur.WriteFile("skipped.txt", []byte("needle\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for name, body := range files {
		if err := cur.WriteFile(name, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cur.Close()
	ws, err := engine.OpenWorkspace(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	return ws, deepest
}

func runTool(tb testing.TB, ws *engine.Workspace, tool engine.Tool, name string, args map[string]any) *engine.Result {
	tb.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := tool.Run(context.Background(), &engine.Call{ID: "c1", Session: "s1", Tool: name, Args: raw, WS: ws})
	if err != nil {
		tb.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// TestDeepTree checks list_files and search_files on a chain of nested
// directories much deeper than PATH_MAX allows to name in one path: the
// deepest entries are found, the .gitignore halfway down still applies.
func TestDeepTree(t *testing.T) {
	const depth = 1500 // "d/" * 1500 is 3,000 bytes; with the files below, past 4,096 would need 2,048
	ws, deepest := deepWS(t, depth, map[string]string{"a.txt": "one\nneedle here\nthree\n", "x.log": "needle\n"})

	r := runTool(t, ws, SearchFiles(), "search_files", map[string]any{"path": ".", "regex": "needle"})
	want := "Found 1 result.\n\n# " + deepest + "/a.txt\n  1 | one\n  2 | needle here\n  3 | three\n----"
	if r.Output != want {
		t.Errorf("search_files output ends %q, want %q", tail(r.Output), tail(want))
	}

	r = runTool(t, ws, ListFiles(ListOptions{Limit: 5000}), "list_files", map[string]any{"path": ".", "recursive": true})
	lines := strings.Split(r.Output, "\n")
	// .gitignore, the depth directories, the halfway .gitignore and a.txt
	if len(lines) != depth+3 {
		t.Errorf("list_files listed %d entries, want %d", len(lines), depth+3)
	}
	last := lines[len(lines)-1]
	if last != deepest+"/a.txt" {
		t.Errorf("list_files last entry %q, want %q", tail(last), tail(deepest+"/a.txt"))
	}
	for _, l := range lines {
		if strings.HasSuffix(l, ".log") || strings.HasSuffix(l, "skipped.txt") {
			t.Errorf("list_files shows ignored %q", tail(l))
		}
	}
}

func tail(s string) string {
	if len(s) > 80 {
		return "..." + s[len(s)-80:]
	}
	return s
}

// BenchmarkDeepTree measures list_files and search_files over 3,000 nested
// directories (issue: no answer in 60 s when each directory was reopened
// from the workspace root).
func BenchmarkDeepTree(b *testing.B) {
	ws, _ := deepWS(b, 3000, map[string]string{"a.txt": "needle\n"})
	b.Run("list_files", func(b *testing.B) {
		for b.Loop() {
			runTool(b, ws, ListFiles(ListOptions{}), "list_files", map[string]any{"path": ".", "recursive": true})
		}
	})
	b.Run("search_files", func(b *testing.B) {
		for b.Loop() {
			runTool(b, ws, SearchFiles(), "search_files", map[string]any{"path": ".", "regex": "needle"})
		}
	})
}
