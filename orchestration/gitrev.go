package orchestration

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Git gives the revision the workspace is at, for the ledger's vcs field.
// The repository stays open: opening it costs more than reading HEAD, and a
// hook answers many calls.
type Git struct {
	repo *git.Repository

	// For LazyGit: the workspace, opened on the first Head.
	dir  string
	once sync.Once
	err  error
}

// LazyGit is OpenGit put off until the first Head: a process that records
// nothing (a hook answering a read, say) never opens the repository.
func LazyGit(workspace string) *Git {
	return &Git{dir: workspace}
}

// OpenGit opens the git repository containing workspace, looking upwards for
// it and following linked worktrees to their common directory. It returns
// (nil, nil) when workspace is not inside a repository.
func OpenGit(workspace string) (*Git, error) {
	repo, err := git.PlainOpenWithOptions(workspace, &git.PlainOpenOptions{
		DetectDotGit:          true,
		EnableDotGitCommonDir: true,
	})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", workspace, err)
	}
	return &Git{repo: repo}, nil
}

// Head returns the commit HEAD points to, read afresh on each call. It
// returns "" without error for a repository with no commits yet, and for a
// nil *Git (no repository).
func (g *Git) Head() (string, error) {
	if g == nil {
		return "", nil
	}
	if g.dir != "" {
		g.once.Do(func() {
			var opened *Git
			if opened, g.err = OpenGit(g.dir); opened != nil {
				g.repo = opened.repo
			}
		})
		if g.err != nil {
			return "", g.err
		}
		if g.repo == nil {
			return "", nil // not in a repository
		}
	}
	ref, err := g.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read git HEAD: %w", err)
	}
	return ref.Hash().String(), nil
}
