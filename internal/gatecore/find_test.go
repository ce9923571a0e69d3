package gatecore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkdirs(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, ".yaml") {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("active_intents: []\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root,
		"outer/.orchestration/active_intents.yaml",
		"outer/nested/.orchestration/active_intents.yaml", // a nested workspace of its own
		"outer/nested/src/deep",
		"plain/.orchestration", // governed, but declares no intents yet
		"plain/sub/.orchestration",
		"plain/sub/x",
		"none/a/b",
	)
	for _, tc := range []struct{ start, want string }{
		{"outer", "outer"},
		{"outer/nested/src/deep", "outer"}, // the parent keeps governing
		{"outer/nested", "outer"},
		{"plain/sub/x", "plain/sub"}, // no ancestor declares intents: the nearest
		{"plain", "plain"},
	} {
		got, err := Find(filepath.Join(root, tc.start))
		if err != nil || got != filepath.Join(root, tc.want) {
			t.Errorf("Find(%s) = %q, %v; want %s", tc.start, got, err, tc.want)
		}
	}
	_, err := Find(filepath.Join(root, "none", "a", "b"))
	if err == nil || !strings.Contains(err.Error(), "intentgate init") {
		t.Errorf("Find(none/a/b) error = %v, want one naming intentgate init", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "none", "a", "b", ".orchestration")); err == nil {
		t.Error("Find created .orchestration")
	}
	if _, err := Open(filepath.Join(root, "none"), Options{}); err == nil || !strings.Contains(err.Error(), "intentgate init") {
		t.Errorf("Open of an ungoverned directory: %v, want an error naming intentgate init", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "none", ".orchestration")); err == nil {
		t.Error("Open created .orchestration")
	}
}
