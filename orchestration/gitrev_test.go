package orchestration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitRun runs the git CLI in dir, isolated from the user's configuration.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitCommit(t *testing.T, dir, file, content string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", file)
	gitRun(t, dir, "commit", "-q", "-m", "change "+file)
	return gitRun(t, dir, "rev-parse", "HEAD")
}

func gitHead(t *testing.T, g *Git) string {
	t.Helper()
	h, err := g.Head()
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	return h
}

func TestGitNotARepository(t *testing.T) {
	dir := t.TempDir()
	g, err := OpenGit(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g != nil {
		t.Skip("the temporary directory is itself inside a git repository")
	}
	if h, err := g.Head(); h != "" || err != nil {
		t.Errorf("nil Git Head() = %q, %v; want \"\", nil", h, err)
	}
}

func TestGitHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "init", "-q")

	g, err := OpenGit(repo)
	if err != nil || g == nil {
		t.Fatalf("OpenGit = %v, %v", g, err)
	}
	t.Run("unborn branch", func(t *testing.T) {
		if h := gitHead(t, g); h != "" {
			t.Errorf("Head() with no commits = %q, want \"\"", h)
		}
	})

	first := gitCommit(t, repo, "a.txt", "one\n")
	t.Run("first commit", func(t *testing.T) {
		if h := gitHead(t, g); h != first {
			t.Errorf("Head() = %q, want %q", h, first)
		}
	})

	second := gitCommit(t, repo, "a.txt", "two\n")
	t.Run("new commit seen by the open repository", func(t *testing.T) {
		if h := gitHead(t, g); h != second {
			t.Errorf("Head() = %q, want %q", h, second)
		}
	})

	t.Run("from a subdirectory", func(t *testing.T) {
		sub, err := OpenGit(filepath.Join(repo, "sub", "dir"))
		if err != nil || sub == nil {
			t.Fatalf("OpenGit(sub) = %v, %v", sub, err)
		}
		if h := gitHead(t, sub); h != second {
			t.Errorf("Head() = %q, want %q", h, second)
		}
	})

	t.Run("packed refs", func(t *testing.T) {
		gitRun(t, repo, "pack-refs", "--all")
		if h := gitHead(t, g); h != second {
			t.Errorf("Head() = %q, want %q", h, second)
		}
	})

	t.Run("detached HEAD", func(t *testing.T) {
		gitRun(t, repo, "checkout", "-q", "--detach", first)
		defer gitRun(t, repo, "checkout", "-q", "main")
		if h := gitHead(t, g); h != first {
			t.Errorf("Head() = %q, want %q", h, first)
		}
	})

	t.Run("linked worktree", func(t *testing.T) {
		wt := filepath.Join(root, "wt")
		gitRun(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
		third := gitCommit(t, wt, "b.txt", "three\n")
		w, err := OpenGit(wt)
		if err != nil || w == nil {
			t.Fatalf("OpenGit(worktree) = %v, %v", w, err)
		}
		if h := gitHead(t, w); h != third {
			t.Errorf("worktree Head() = %q, want %q", h, third)
		}
		if h := gitHead(t, g); h != second {
			t.Errorf("main Head() = %q, want %q", h, second)
		}
	})
}

// LazyGit answers as OpenGit does, opening the repository on first use.
func TestLazyGit(t *testing.T) {
	if h, err := LazyGit(t.TempDir()).Head(); err != nil || (h != "" && len(h) != 40) {
		t.Errorf("LazyGit(not a repository).Head() = %q, %v", h, err)
	}
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	g := LazyGit(repo)
	if h, err := g.Head(); h != "" || err != nil {
		t.Errorf("Head() with no commits = %q, %v; want \"\", nil", h, err)
	}
	first := gitCommit(t, repo, "a.txt", "one\n")
	if h, err := g.Head(); h != first || err != nil {
		t.Errorf("Head() = %q, %v; want %q", h, err, first)
	}
}

// Head reads git's files itself; in every layout git writes, it must name
// the commit `git rev-parse HEAD` names ("" where git finds no commit).
func TestGitHeadMatchesGitCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not on PATH")
		}
		t.Skip("git not on PATH")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "deep", "er"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "init", "-q")
	revParse := func(dir string) string {
		cmd := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GIT_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("git rev-parse HEAD in %s: %v", dir, err)
		}
		return strings.TrimSpace(string(out)) // exit 1, nothing printed: no commit
	}
	check := func(t *testing.T, dir string) {
		t.Helper()
		want := revParse(dir)
		g, err := OpenGit(dir)
		if err != nil || g == nil {
			t.Fatalf("OpenGit(%s) = %v, %v", dir, g, err)
		}
		if got := gitHead(t, g); got != want {
			t.Errorf("Head() in %s = %q, git rev-parse HEAD = %q", dir, got, want)
		}
		if got, err := LazyGit(dir).Head(); got != want || err != nil {
			t.Errorf("LazyGit Head() in %s = %q, %v; git says %q", dir, got, err, want)
		}
	}
	check(t, repo) // unborn
	c1 := gitCommit(t, repo, "a.txt", "1\n")
	check(t, filepath.Join(repo, "deep", "er"))
	gitRun(t, repo, "checkout", "-q", "-b", "feat/nested/name")
	gitCommit(t, repo, "a.txt", "2\n")
	check(t, repo)
	gitRun(t, repo, "pack-refs", "--all", "--prune")
	check(t, repo)
	// A loose ref newer than its packed entry wins.
	gitCommit(t, repo, "a.txt", "3\n")
	check(t, repo)
	// A symbolic ref pointing at another symbolic ref.
	gitRun(t, repo, "symbolic-ref", "refs/heads/alias", "refs/heads/feat/nested/name")
	gitRun(t, repo, "symbolic-ref", "HEAD", "refs/heads/alias")
	check(t, repo)
	// HEAD on a branch that does not exist (orphan): no commit.
	gitRun(t, repo, "checkout", "-q", "--orphan", "fresh")
	check(t, repo)
	gitRun(t, repo, "checkout", "-q", "-f", "main")
	check(t, repo)
	gitRun(t, repo, "checkout", "-q", "--detach", c1)
	check(t, repo)
	gitRun(t, repo, "checkout", "-q", "main")

	// A separate git directory: .git is a file naming it by absolute path.
	sep := filepath.Join(root, "sep")
	gitRun(t, root, "init", "-q", "--separate-git-dir", filepath.Join(root, "sep.git"), sep)
	gitCommit(t, sep, "s.txt", "s\n")
	check(t, sep)

	// Linked worktrees: detached, on a branch, and one whose branch is packed.
	wt1 := filepath.Join(root, "wt1")
	gitRun(t, repo, "worktree", "add", "-q", "--detach", wt1, c1)
	check(t, wt1)
	wt2 := filepath.Join(root, "wt2")
	gitRun(t, repo, "worktree", "add", "-q", "-b", "side", wt2)
	gitCommit(t, wt2, "w.txt", "w\n")
	check(t, wt2)
	gitRun(t, repo, "pack-refs", "--all", "--prune")
	check(t, wt2)
	check(t, repo)

	// A submodule: .git is a file with a relative path into the parent's
	// .git/modules.
	sub := filepath.Join(root, "subsrc")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, sub, "init", "-q")
	gitCommit(t, sub, "x.txt", "x\n")
	gitRun(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
	check(t, filepath.Join(repo, "mod"))
	if b, err := os.ReadFile(filepath.Join(repo, "mod", ".git")); err != nil || !strings.HasPrefix(string(b), "gitdir: ../") {
		t.Errorf("submodule .git = %q, %v; want a relative gitdir file", b, err)
	}
}

// A .git file that names no directory, or a .git without HEAD, is an error
// or no repository, never a revision.
func TestGitBrokenDotGit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("not a gitdir line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err := OpenGit(dir); err == nil {
		t.Errorf("OpenGit with a malformed .git file = %v, nil; want an error", g)
	}
	dir2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir2, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if g, err := OpenGit(dir2); err == nil {
		t.Errorf("OpenGit with a .git without HEAD = %v, nil; want an error", g)
	}
	// A symbolic ref that tries to leave the git directory.
	dir3 := t.TempDir()
	gitRun(t, dir3, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir3, ".git", "HEAD"), []byte("ref: ../../etc/passwd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := OpenGit(dir3)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := g.Head(); err == nil {
		t.Errorf("Head() through ref: ../../etc/passwd = %q, nil; want an error", h)
	}
}

// A Git keeps the files it reads while a stat proves them unchanged. A ref
// rewritten in place between two calls, the same size, its mtime set back,
// and a packed-refs file rewritten the same way, must still be seen.
func TestGitHeadSeesRefsRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	for _, d := range []string{"refs/heads", "objects"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shaA, shaB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	old := time.Date(2020, 5, 6, 7, 8, 9, 10, time.UTC)
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(gitDir, filepath.FromSlash(rel))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	put("HEAD", "ref: refs/heads/main\n")
	put("refs/heads/main", shaA+"\n")
	put("packed-refs", "# pack-refs with: peeled\n"+shaA+" refs/heads/other\n")
	g, err := OpenGit(dir)
	if err != nil || g == nil {
		t.Fatalf("OpenGit = %v, %v", g, err)
	}
	// Settled: what Head reads next is kept.
	time.Sleep(2100 * time.Millisecond)
	for range 2 {
		if h := gitHead(t, g); h != shaA {
			t.Fatalf("Head = %q, want %q", h, shaA)
		}
	}
	put("refs/heads/main", shaB+"\n")
	if h := gitHead(t, g); h != shaB {
		t.Fatalf("Head after the loose ref was rewritten in place = %q, want %q", h, shaB)
	}
	put("HEAD", "ref: refs/heads/othr\n")
	if h := gitHead(t, g); h != "" {
		t.Fatalf("Head on an unborn branch = %q, want \"\"", h)
	}
	put("HEAD", "ref: refs/heads/other\n")
	time.Sleep(2100 * time.Millisecond)
	for range 2 {
		if h := gitHead(t, g); h != shaA {
			t.Fatalf("Head from packed-refs = %q, want %q", h, shaA)
		}
	}
	put("packed-refs", "# pack-refs with: peeled\n"+shaB+" refs/heads/other\n")
	if h := gitHead(t, g); h != shaB {
		t.Fatalf("Head after packed-refs was rewritten in place = %q, want %q", h, shaB)
	}
}
