package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CheckpointRef is the git ref sealed checkpoints hang from: a chain of
// commits, one per seal, each the parent of the next. It lives in the
// repository's object store, not in the worktree, so no file an agent can
// edit holds it; push it (git push origin refs/intentgate/checkpoints) to keep
// a copy out of a local shell's reach too.
const CheckpointRef = "refs/intentgate/checkpoints"

const (
	checkpointFormat   = 1
	checkpointFileName = "checkpoint.json"
	checkpointLines    = "lines"
)

// Checkpoint says what the ledger held when it was sealed. The first Bytes
// bytes of the ledger file, its first Records complete lines, had the SHA-256
// SHA256: anyone can check it with `head -c BYTES agent_trace.jsonl |
// sha256sum`. A ledger that only grew since still starts with those bytes.
type Checkpoint struct {
	Format int `json:"format"`
	// Ledger is the ledger's path relative to the worktree root.
	Ledger   string    `json:"ledger"`
	Records  int       `json:"records"`
	Bytes    int64     `json:"bytes"`
	SHA256   string    `json:"sha256"`
	LastLine string    `json:"last_line,omitempty"` // chain link of line Records
	Time     time.Time `json:"time"`
	Head     string    `json:"head,omitempty"` // the commit HEAD was at
	// LinesFrom: the commit's "lines" blob holds the SHA-256 of each line
	// after the first LinesFrom (32 bytes each, the earlier ones are in the
	// parent checkpoints), which lets verify say which sealed line changed.
	LinesFrom int `json:"lines_from"`

	Commit string `json:"-"` // the checkpoint's commit, when loaded

	lines [][32]byte // every sealed line's hash, when known (len Records)
}

// gitRepo opens the repository holding dir, or returns nil without error
// when there is none.
func gitRepo(dir string) (*git.Repository, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", dir, err)
	}
	return repo, nil
}

// ledgerKey is the ledger's slash path relative to the repository's worktree.
func ledgerKey(repo *git.Repository, ledger string) (string, error) {
	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("checkpoints need a worktree: %w", err)
	}
	root, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(ledger)
	if err != nil {
		return "", err
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// loadCheckpoints reads the checkpoint chain, oldest first, keeping those of
// the ledger named key, with each one's sealed line hashes where the chain has
// them all.
func loadCheckpoints(repo *git.Repository, key string) ([]*Checkpoint, error) {
	return loadCheckpointsAt(repo, CheckpointRef, key)
}

func loadCheckpointsAt(repo *git.Repository, refName, key string) ([]*Checkpoint, error) {
	ref, err := repo.Reference(plumbing.ReferenceName(refName), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", refName, err)
	}
	var chain []*Checkpoint
	seen := map[plumbing.Hash]bool{}
	for h := ref.Hash(); !h.IsZero() && !seen[h]; {
		seen[h] = true
		c, err := repo.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", h, err)
		}
		cp, err := readCheckpoint(c)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", h, err)
		}
		if cp.Ledger == key {
			chain = append(chain, cp)
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	// Oldest first; then each checkpoint's lines are its parents' plus its own.
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	var known [][32]byte
	for _, cp := range chain {
		own := cp.lines
		cp.lines = nil
		if cp.LinesFrom <= len(known) && cp.LinesFrom+len(own) == cp.Records {
			all := make([][32]byte, 0, cp.Records)
			all = append(append(all, known[:cp.LinesFrom]...), own...)
			cp.lines, known = all, all
		} else {
			known = nil
		}
	}
	return chain, nil
}

func readCheckpoint(c *object.Commit) (*Checkpoint, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	f, err := tree.File(checkpointFileName)
	if err != nil {
		return nil, err
	}
	body, err := f.Contents()
	if err != nil {
		return nil, err
	}
	cp := &Checkpoint{}
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	if err := dec.Decode(cp); err != nil {
		return nil, err
	}
	if cp.Format != checkpointFormat || cp.Records < 0 || cp.Bytes < 0 || len(cp.SHA256) != 64 {
		return nil, fmt.Errorf("not a checkpoint of format %d", checkpointFormat)
	}
	cp.Commit = c.Hash.String()
	if lf, err := tree.File(checkpointLines); err == nil {
		r, err := lf.Reader()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		if len(b)%32 == 0 {
			cp.lines = make([][32]byte, len(b)/32)
			for i := range cp.lines {
				copy(cp.lines[i][:], b[i*32:])
			}
		}
	}
	return cp, nil
}

// writeCheckpoint adds cp (with the hashes of the lines after LinesFrom) as a
// commit on top of the checkpoint ref, refusing if the ref moved meanwhile.
func writeCheckpoint(repo *git.Repository, cp *Checkpoint, own [][32]byte) (string, error) {
	meta, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return "", err
	}
	blob := func(b []byte) (plumbing.Hash, error) {
		obj := repo.Storer.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(b); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		return repo.Storer.SetEncodedObject(obj)
	}
	metaHash, err := blob(append(meta, '\n'))
	if err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	packed := make([]byte, 0, 32*len(own))
	for _, h := range own {
		packed = append(packed, h[:]...)
	}
	linesHash, err := blob(packed)
	if err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	entries := []object.TreeEntry{
		{Name: checkpointFileName, Mode: filemode.Regular, Hash: metaHash},
		{Name: checkpointLines, Mode: filemode.Regular, Hash: linesHash},
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	tree := &object.Tree{Entries: entries}
	tobj := repo.Storer.NewEncodedObject()
	if err := tree.Encode(tobj); err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	treeHash, err := repo.Storer.SetEncodedObject(tobj)
	if err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	old, err := repo.Reference(plumbing.ReferenceName(CheckpointRef), false)
	if err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", fmt.Errorf("read %s: %w", CheckpointRef, err)
	}
	sig := object.Signature{Name: "intentgate", Email: "intentgate@localhost", When: cp.Time}
	commit := &object.Commit{
		Author: sig, Committer: sig, TreeHash: treeHash,
		Message: fmt.Sprintf("intentgate checkpoint: %s, %d records, %d bytes\n\nsha256 %s\n", cp.Ledger, cp.Records, cp.Bytes, cp.SHA256),
	}
	if old != nil {
		commit.ParentHashes = []plumbing.Hash{old.Hash()}
	}
	cobj := repo.Storer.NewEncodedObject()
	if err := commit.Encode(cobj); err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	commitHash, err := repo.Storer.SetEncodedObject(cobj)
	if err != nil {
		return "", fmt.Errorf("write checkpoint: %w", err)
	}
	ref := plumbing.NewHashReference(plumbing.ReferenceName(CheckpointRef), commitHash)
	if err := repo.Storer.CheckAndSetReference(ref, old); err != nil {
		return "", fmt.Errorf("update %s (sealed concurrently? try again): %w", CheckpointRef, err)
	}
	return commitHash.String(), nil
}

// headOf is the commit HEAD points to, "" when there is none.
func headOf(repo *git.Repository) string {
	ref, err := repo.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}
