package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// settledAfter is longer than the time a file's last change must lie before
// a read for a dispatch process to keep its bytes and answer later calls
// from a stat (two seconds where timestamps may hold whole seconds).
func settledAfter() time.Duration {
	if runtime.GOOS == "linux" {
		return 200 * time.Millisecond
	}
	return 2100 * time.Millisecond
}

// A long-running dispatch process keeps active_intents.yaml between calls
// and checks it with a stat. Edits between two calls that keep its size
// and set its mtime back, in place or by a rename over it, must still
// apply to the very next call: a kept decision must never outlive a change.
func TestIntentsEditedBetweenCallsApply(t *testing.T) {
	t.Parallel()
	const intents = `active_intents:
  - id: INT-001
    name: edited
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`
	ws := e2eWorkspace(t, intents, nil)
	file := filepath.Join(ws, ".orchestration", "active_intents.yaml")
	old := time.Date(2021, 3, 4, 5, 6, 7, 8, time.UTC)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	// What the process reads next is settled: it keeps it, and answers the
	// calls after from a stat alone.
	settle := func() { time.Sleep(settledAfter()) }
	edit := func(from, to string, rename bool) {
		t.Helper()
		cur, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		next := strings.Replace(string(cur), from, to, 1)
		if len(next) != len(cur) || next == string(cur) {
			t.Fatalf("edit %q -> %q: not a same-size change of %q", from, to, cur)
		}
		target := file
		if rename {
			target = file + ".new"
		}
		if err := os.WriteFile(target, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(target, old, old); err != nil {
			t.Fatal(err)
		}
		if rename {
			if err := os.Rename(target, file); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Stat(file)
		if err != nil || fi.Size() != int64(len(cur)) || !fi.ModTime().Equal(old) {
			t.Fatalf("after the edit: %v, %v; want size %d and mtime %v", fi, err, len(cur), old)
		}
	}
	settle()
	s := startDispatch(t, ws, "edits")
	write := func(path string) result {
		t.Helper()
		return s.call("write_to_file", map[string]any{"path": path, "content": "x\n"})
	}
	want := func(r result, code, what string) {
		t.Helper()
		if code == "" && !r.OK || r.code() != code {
			t.Fatalf("%s: %+v; want %q", what, r, code)
		}
	}
	want(s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}), "", "select")
	want(write("src/a.txt"), "", "a write in scope")
	want(write("src/b.txt"), "", "a write in scope, intents unchanged")

	// In place, same size, mtime set back: the scope moves to doc/.
	edit(`["src/**"]`, `["doc/**"]`, false)
	want(write("src/c.txt"), "SCOPE_VIOLATION", "a write to src/ after the scope moved to doc/ in place")
	want(write("doc/c.txt"), "", "a write to doc/ after the scope moved there")

	// Renamed over, same size, mtime set back: the scope moves to lib/.
	settle()
	want(write("doc/d.txt"), "", "a write to doc/, intents settled")
	edit(`["doc/**"]`, `["lib/**"]`, true)
	want(write("doc/e.txt"), "SCOPE_VIOLATION", "a write to doc/ after a rename moved the scope to lib/")
	want(write("lib/e.txt"), "", "a write to lib/ after the scope moved there")

	// The status, in place: the intent stops being in progress.
	settle()
	want(write("lib/f.txt"), "", "a write to lib/, intents settled")
	edit(`status: IN_PROGRESS`, `status: "COMPLETED"`, false)
	want(write("lib/g.txt"), "INTENT_NOT_ACTIVE", "a write after the intent was completed")
	s.close()
}
