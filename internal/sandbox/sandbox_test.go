package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestStaticRoot(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"**", ""},
		{"src/**", "src"},
		{"src/auth/**/*.go", "src/auth"},
		{"./src/*.go", "src"},
		{"src/a.go", "src/a.go"},
		{"src/{a,b}/x", "src"},
		{"src/[ab]/x", "src"},
		{"a/?/b", "a"},
		{"../x/**", ""},
		{"src/../../x", ""},
		{"*.md", ""},
	} {
		if got := StaticRoot(tc.in); got != tc.want {
			t.Errorf("StaticRoot(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestForScope(t *testing.T) {
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	for _, d := range []string{".orchestration", ".git/hooks", ".claude", "src/x/.orchestration", "src/y/.git", "docs", "vendor/lib/.git"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	cfg := Config{WritableOutside: []string{}}
	p, err := ForScope(ws, []string{"src/**", "src/x/*.go", "docs/*.md", "README.md", "out/**", "../up/**", ".orchestration/**", "newpkg/**"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(ws, "docs"), filepath.Join(ws, "newpkg"), filepath.Join(ws, "src")}
	if !reflect.DeepEqual(p.Writable, want) {
		t.Errorf("Writable = %q, want %q", p.Writable, want)
	}
	if fi, err := os.Stat(filepath.Join(ws, "newpkg")); err != nil || !fi.IsDir() {
		t.Errorf("the missing root newpkg was not created: %v", err)
	}
	wantRO := []string{filepath.Join(ws, "src/x/.orchestration"), filepath.Join(ws, "src/y/.git")}
	if !reflect.DeepEqual(p.ReadOnly, wantRO) {
		t.Errorf("ReadOnly = %q, want %q", p.ReadOnly, wantRO)
	}

	p, err = ForScope(ws, []string{"**"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Writable, []string{ws}) {
		t.Errorf("Writable for ** = %q, want the workspace", p.Writable)
	}
	wantRO = []string{filepath.Join(ws, ".claude"), filepath.Join(ws, ".git"), filepath.Join(ws, ".orchestration"),
		filepath.Join(ws, "src/x/.orchestration"), filepath.Join(ws, "src/y/.git"), filepath.Join(ws, "vendor/lib/.git")}
	if !reflect.DeepEqual(p.ReadOnly, wantRO) {
		t.Errorf("ReadOnly for ** = %q, want %q", p.ReadOnly, wantRO)
	}

	p, err = ForScope(ws, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Writable) != 0 {
		t.Errorf("Writable without an intent = %q, want nothing", p.Writable)
	}
}

func TestParseConfig(t *testing.T) {
	home, _ := os.UserHomeDir()
	c, err := ParseConfig("config.yaml", []byte("on_violation: revert\nsandbox:\n  writable_outside: [~/.npm, /opt/cache]\n  allow_unconfined: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, ".npm"), "/opt/cache"}; !reflect.DeepEqual(c.WritableOutside, want) || !c.AllowUnconfined {
		t.Errorf("ParseConfig = %+v, want %q and allow_unconfined", c, want)
	}
	for _, bad := range []string{
		"sandbox:\n  writable_outside: [relative/dir]\n",
		"sandbox:\n  writable_outside: [/]\n",
		"sandbox:\n  writable_outside: [\"~\"]\n",
		"sandbox:\n  allow_unconfinde: true\n",
		"sandbox: yes\n",
		"sandbox:\n  allow_unconfined: maybe\n",
	} {
		if _, err := ParseConfig("config.yaml", []byte(bad)); err == nil {
			t.Errorf("ParseConfig(%q) accepted it", bad)
		}
	}
	c, err = ParseConfig("config.yaml", []byte("on_violation: report\n"))
	if err != nil || c.WritableOutside != nil || c.AllowUnconfined {
		t.Errorf("ParseConfig without a sandbox section = %+v, %v; want the defaults", c, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("sandbox:\n  writable_outside: [~/.npm]\n  allow_unconfined: false\n"))
	f.Add([]byte("sandbox: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("config.yaml", data)
		if err != nil {
			return
		}
		for _, p := range c.WritableOutside {
			if !filepath.IsAbs(p) || p == "/" {
				t.Fatalf("ParseConfig(%q) accepted %q", data, p)
			}
		}
	})
}

func TestRefusedPath(t *testing.T) {
	for line, want := range map[string]string{
		"sh: 1: cannot create docs/x: Permission denied":                            "docs/x",
		"/bin/sh: 1: cannot create .intentignore: Read-only file system":            ".intentignore",
		"touch: cannot touch 'docs/x': Read-only file system":                       "docs/x",
		"bash: line 1: docs/y.md: Permission denied":                                "docs/y.md",
		"bash: docs/z: Permission denied":                                           "docs/z",
		"mkdir: cannot create directory \u2018.codex\u2019: Permission denied":      ".codex",
		"rm: cannot remove '.orchestration/sessions/a.json': Read-only file system": ".orchestration/sessions/a.json",
		"Permission denied":                       "",
		"error: Operation not permitted":          "",
		"npm ERR! code EACCES: Permission denied": "",
	} {
		if got := RefusedPath(line); got != want {
			t.Errorf("RefusedPath(%q) = %q, want %q", line, got, want)
		}
	}
}

func FuzzRefusedPath(f *testing.F) {
	f.Add("touch: cannot touch 'docs/x': Read-only file system")
	f.Add("sh: 1: cannot create docs/x: Permission denied")
	f.Add("bash: line 1: a: b: Permission denied")
	f.Fuzz(func(t *testing.T, line string) {
		p := RefusedPath(line)
		if p != "" && !strings.Contains(line, p) {
			t.Fatalf("RefusedPath(%q) = %q, which is not in the line", line, p)
		}
	})
}
