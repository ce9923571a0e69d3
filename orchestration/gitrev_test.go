package orchestration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
