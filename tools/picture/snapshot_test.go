//go:build linux

package picture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func snapWS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range map[string]string{
		"docs/readme.md":                     "hello world\n",
		".orchestration/agent_trace.jsonl":   "{}\n",
		".orchestration/intent_map.json":     "{}\n",
		".orchestration/active_intents.yaml": "active_intents: []\n",
	} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func snap(t *testing.T, dir string) *Snapshot {
	t.Helper()
	s, err := TakeSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func changed(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path)
	}
	return out
}

// An in-place rewrite of the same size whose mtime is put back shows in the
// ctime.
func TestSnapshotSeesRestoredMtime(t *testing.T) {
	dir := snapWS(t)
	p := filepath.Join(dir, "docs/readme.md")
	fi, _ := os.Stat(p)
	before := snap(t, dir)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("EVIL"), 0)
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	got := changed(before.Diff(snap(t, dir)))
	if len(got) != 1 || got[0] != "docs/readme.md" {
		t.Fatalf("changes %v, want docs/readme.md", got)
	}
}

// A bookkeeping file replaced by a symlink is a change; a bookkeeping file
// that merely grew is not.
func TestSnapshotBookkeeping(t *testing.T) {
	dir := snapWS(t)
	before := snap(t, dir)
	os.WriteFile(filepath.Join(dir, ".orchestration/agent_trace.jsonl"), []byte("{}\n{}\n"), 0o644)
	os.Remove(filepath.Join(dir, ".orchestration/intent_map.json"))
	os.Symlink("/nonexistent/target", filepath.Join(dir, ".orchestration/intent_map.json"))
	got := changed(before.Diff(snap(t, dir)))
	if len(got) != 1 || got[0] != ".orchestration/intent_map.json" {
		t.Fatalf("changes %v, want only .orchestration/intent_map.json", got)
	}
}

// A tree past PATH_MAX does not fail the snapshot; it is reported as unseen
// and the rest of the picture is complete.
func TestSnapshotUnseen(t *testing.T) {
	dir := snapWS(t)
	before := snap(t, dir)
	// Build the deep tree with relative steps through directory handles.
	name := strings.Repeat("n", 200)
	cur, err := os.OpenRoot(filepath.Join(dir, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 22; i++ {
		if err := cur.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := cur.OpenRoot(name)
		cur.Close()
		if err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	cur.WriteFile("f.md", []byte("hidden\n"), 0o644)
	cur.Close()
	os.WriteFile(filepath.Join(dir, "docs/new.md"), []byte("x\n"), 0o644)
	after := snap(t, dir)
	if u := after.Unseen(); len(u) == 0 || !strings.HasPrefix(u[0].Path, "docs/"+name) || len(u[0].Path) > maxUnseenPath {
		t.Errorf("unseen: %v", u)
	}
	got := changed(before.Diff(after))
	found := false
	for _, p := range got {
		found = found || p == "docs/new.md"
	}
	if !found {
		t.Errorf("changes %v lack docs/new.md", got)
	}
}
