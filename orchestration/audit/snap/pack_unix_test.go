//go:build unix

package snap

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// What a hostile process could leave at the pack's name: a symlink to
// another file of the index (which a Root would follow, since it stays
// inside), a hard link to another file (of the index or anywhere on the
// same file system: the same file at both names, which an Lstat cannot
// tell), a FIFO (which would block a write-only open), a directory.
// Writing a snapshot refuses each without blocking or writing through it,
// and reading finds nothing.
func TestPackHostileNames(t *testing.T) {
	content := []byte("one\ntwo\n")
	sha := SHA256Hex(content)
	for _, tc := range []struct {
		name string
		make func(p, target string) error
	}{
		{"symlink", func(p, target string) error { return os.Symlink(filepath.Join("..", filepath.Base(target)), p) }},
		{"absolute symlink", func(p, target string) error { return os.Symlink(target, p) }},
		{"hard link", func(p, target string) error { return os.Link(target, p) }},
		{"fifo", func(p, _ string) error { return syscall.Mkfifo(p, 0o644) }},
		{"directory", func(p, _ string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "index.json")
			if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "snap"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(packPath(dir), target); err != nil {
				t.Fatal(err)
			}
			if err := Write(dir, sha, content); err == nil {
				t.Error("Write appended to it")
			}
			if b, _ := os.ReadFile(target); string(b) != "{}\n" {
				t.Errorf("index.json now %q", b)
			}
			if _, ok := Read(dir, sha); ok {
				t.Error("Read found a snapshot")
			}
		})
	}
}
