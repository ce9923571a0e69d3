package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCanonical throws arbitrary paths at the canonicalizer in a workspace
// holding symlinks that point inside, outside, in loops and nowhere. Whatever
// it accepts must be a clean workspace-relative path, free of symlinks in
// every component that exists, and inside the workspace once resolved.
func FuzzCanonical(f *testing.F) {
	root := f.TempDir()
	outside := filepath.Join(root, "outside")
	ws := filepath.Join(root, "ws")
	for _, d := range []string{outside, filepath.Join(ws, "src", "a"), filepath.Join(ws, "docs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{"src/a/f.go", "docs/r.md", "top.txt"} {
		if err := os.WriteFile(filepath.Join(ws, p), []byte("x\n"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		"src/in":      "a",
		"src/up":      "../docs",
		"src/out":     outside,
		"src/rel-out": "../../outside",
		"src/loop1":   "loop2",
		"src/loop2":   "loop1",
		"src/dangle":  "nowhere/x",
		"src/self":    ".",
		"abs-in":      filepath.Join(ws, "src"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, filepath.FromSlash(name))); err != nil {
			f.Skip("symlinks unavailable:", err)
		}
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { w.Close() })

	for _, seed := range []string{"src/a/f.go", "src/in/f.go", "src/up/r.md", "src/out/x", "src/rel-out/x",
		"src/loop1/x", "src/dangle", "src/self/self/a/f.go", "abs-in/a/f.go", "../x", "src/../x",
		"/etc/passwd", ws + "/top.txt", "src//a/./f.go", "src\\a", "%2e%2e/x", "~/x", " a", "a\x00b", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := w.Canonical(p)
		if err != nil {
			if _, ok := AsDenial(err); !ok {
				t.Fatalf("Canonical(%q) error %v is not a denial", p, err)
			}
			return
		}
		if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
			t.Fatalf("Canonical(%q) = %q, not a relative slash path", p, rel)
		}
		for _, c := range strings.Split(rel, "/") {
			if c == "" || c == "." || c == ".." {
				t.Fatalf("Canonical(%q) = %q has the component %q", p, rel, c)
			}
		}
		// Every existing component is a real directory or file, never a
		// link, so the path means the same to every later open.
		cur := w.Dir
		for _, c := range strings.Split(rel, "/") {
			cur = filepath.Join(cur, c)
			fi, err := os.Lstat(cur)
			if err != nil {
				break
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("Canonical(%q) = %q still goes through the symlink %s", p, rel, cur)
			}
		}
		if !strings.HasPrefix(filepath.Join(w.Dir, filepath.FromSlash(rel)), w.Dir+string(filepath.Separator)) {
			t.Fatalf("Canonical(%q) = %q leaves the workspace", p, rel)
		}
	})
}
