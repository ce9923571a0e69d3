package gitignore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// same checks that this package and go-git's, whose rules .intentignore
// and the workspace pictures followed until now, say the same of path.
func same(t *testing.T, lines []string, domain []string, path []string, isDir bool) {
	t.Helper()
	var ours Matcher
	var theirs []gogit.Pattern
	for _, l := range lines {
		ours = append(ours, Parse(l, domain))
		theirs = append(theirs, gogit.ParsePattern(l, domain))
		if got, want := Parse(l, domain).Match(path, isDir), gogit.ParsePattern(l, domain).Match(path, isDir); int(got) != int(want) {
			t.Fatalf("pattern %q (domain %q) on %q dir=%v: %d, go-git %d", l, domain, path, isDir, got, want)
		}
	}
	if got, want := ours.Match(path, isDir), gogit.NewMatcher(theirs).Match(path, isDir); got != want {
		t.Fatalf("patterns %q (domain %q) on %q dir=%v: %v, go-git %v", lines, domain, path, isDir, got, want)
	}
}

func TestMatchesGoGit(t *testing.T) {
	lines := []string{"*.log", "build/", "/root.txt", "a/**/b", "**/node_modules", "docs/*.md", "!keep.log",
		"a/**", "**", "x/y/", `\!bang`, "trailing  ", `esc\ `, "[abc].txt", "[", "a/b/c", "/a", "**/x/**/y/",
		"sub/", "!sub/", "*", "?.go", "a**b", "/**/z"}
	paths := [][]string{{"a.log"}, {"build"}, {"build", "x"}, {"src", "build"}, {"root.txt"}, {"s", "root.txt"},
		{"a", "b"}, {"a", "x", "y", "b"}, {"a", "b", "c"}, {"node_modules"}, {"p", "node_modules", "q"},
		{"docs", "r.md"}, {"docs", "s", "r.md"}, {"keep.log"}, {"a"}, {"x", "y"}, {"!bang"}, {"trailing"},
		{"esc "}, {"b.txt"}, {"d.txt"}, {"["}, {"sub"}, {"q.go"}, {"z"}, {"k", "z"}, {"x", "q", "y"}}
	for _, l := range lines {
		for _, p := range paths {
			for _, dir := range []bool{false, true} {
				same(t, []string{l}, nil, p, dir)
				same(t, []string{l}, []string{"a"}, append([]string{"a"}, p...), dir)
			}
		}
	}
	for _, p := range paths {
		same(t, []string{"*.log", "!keep.log", "build/", "!build/keep"}, nil, p, false)
	}
}

// FuzzMatchesGoGit compares the two on arbitrary patterns and paths.
func FuzzMatchesGoGit(f *testing.F) {
	f.Add("a/**/b", "a/x/b", false)
	f.Add("!*.go", "src/x.go", true)
	f.Add("/build/", "build", true)
	f.Add("**/q/", "p/q/r", false)
	f.Fuzz(func(t *testing.T, line, path string, isDir bool) {
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		var parts []string
		for _, c := range strings.Split(path, "/") {
			if c != "" {
				parts = append(parts, c)
			}
		}
		if len(parts) == 0 {
			return
		}
		same(t, []string{line}, nil, parts, isDir)
		if len(parts) > 1 {
			same(t, []string{line}, parts[:1], parts, isDir)
		}
	})
}

// On the patterns people write, the rules are git's own: git check-ignore
// agrees on every path of a temporary repository.
func TestMatchesGitCheckIgnore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not on PATH")
		}
		t.Skip("git not on PATH")
	}
	lines := []string{"*.log", "!keep.log", "build/", "/root.txt", "docs/*.md", "a/**/b", "**/node_modules", "[abc].txt", "tmp"}
	dir := t.TempDir()
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir)
		return cmd.Run()
	}
	if err := git("init", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{"x.log", "keep.log", "sub/y.log", "sub/keep.log", "build/out", "src/build/out", "root.txt", "sub/root.txt",
		"docs/r.md", "docs/deep/r.md", "a/b", "a/x/y/b", "a/c", "node_modules/m", "p/node_modules/m", "b.txt", "d.txt",
		"tmp/t", "src/tmp", "buildx", "src/app.go"}
	var m Matcher
	for _, l := range lines {
		m = append(m, Parse(l, nil))
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		parts := strings.Split(f, "/")
		// A path is ignored when it or a directory above it is.
		ours := false
		for i := 1; i <= len(parts); i++ {
			if m.Match(parts[:i], i < len(parts)) {
				ours = true
				break
			}
		}
		err := git("check-ignore", "-q", f)
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("git check-ignore %s: %v", f, err)
		}
		if theirs := err == nil; ours != theirs {
			t.Errorf("%s: ignored %v, git check-ignore says %v", f, ours, theirs)
		}
	}
}
