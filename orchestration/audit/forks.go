package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxMergeWalk bounds the commits walked looking for the merges that explain
// forks; a fork older than that is reported as unexplained.
const maxMergeWalk = 20000

// mergedForks says which forks git's history explains. A fork at line L
// whose prev names line P (0: none) is a union merge's doing when some merge
// commit reachable from HEAD has a parent A in which the ledger (at key) holds
// L's line right after P's line (first, for P = 0), and every line between P
// and L in the file now comes from another parent of that merge and not from
// A. Anything else (a record inserted with a valid prev, anywhere) is a
// break. sum(n) is the hash of line n.
func mergedForks(repo *git.Repository, key string, forks []Fork, sum func(int) [32]byte) (map[int]bool, error) {
	ok := map[int]bool{}
	if len(forks) == 0 {
		return ok, nil
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return ok, nil
	}
	if err != nil {
		return nil, err
	}
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	versions := map[plumbing.Hash]*ledgerVersion{}
	walked := 0
	err = iter.ForEach(func(c *object.Commit) error {
		if walked++; walked > maxMergeWalk || len(ok) == len(forks) {
			return io.EOF
		}
		if len(c.ParentHashes) < 2 {
			return nil
		}
		var vs []*ledgerVersion
		for _, ph := range c.ParentHashes {
			if v := loadLedgerVersion(repo, ph, key, versions); v != nil {
				vs = append(vs, v)
			}
		}
		for _, f := range forks {
			if ok[f.Line] {
				continue
			}
			for a, va := range vs {
				pred, in := va.pred[sum(f.Line)]
				if !in || (f.Parent == 0) != (pred == nil) || (f.Parent > 0 && *pred != sum(f.Parent)) {
					continue
				}
				between := true
				for k := f.Parent + 1; k < f.Line && between; k++ {
					s := sum(k)
					if _, mine := va.pred[s]; mine {
						between = false
						break
					}
					other := false
					for b, vb := range vs {
						if _, has := vb.pred[s]; b != a && has {
							other = true
						}
					}
					between = other
				}
				if between {
					ok[f.Line] = true
					break
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return ok, nil
}

// ledgerVersion is the ledger as one commit holds it: each line's hash and
// the hash of the line before it (nil for the first).
type ledgerVersion struct {
	pred map[[32]byte]*[32]byte
}

func loadLedgerVersion(repo *git.Repository, commit plumbing.Hash, key string, cache map[plumbing.Hash]*ledgerVersion) *ledgerVersion {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil
	}
	f, err := c.File(key)
	if err != nil {
		return nil
	}
	if v, ok := cache[f.Hash]; ok {
		return v
	}
	r, err := f.Reader()
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return nil
	}
	v := &ledgerVersion{pred: map[[32]byte]*[32]byte{}}
	var prev *[32]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		s := sha256.Sum256(trimCR(b[:i]))
		b = b[i+1:]
		if _, dup := v.pred[s]; !dup {
			v.pred[s] = prev
		}
		prev = &s
	}
	cache[f.Hash] = v
	return v
}
