package audit

import (
	"errors"
	"fmt"
	"time"
)

// SealOptions says which ledger to seal.
type SealOptions struct {
	Workspace string
	Ledger    string
	// Force seals a ledger that does not verify (after a person has
	// reviewed and accepted the damage). Without it, Seal refuses: a
	// checkpoint over tampered records would bless them.
	Force    bool
	Progress func(read, total int64)
	Now      time.Time // zero means now
	// Remote, if set, is a git remote whose checkpoints the ledger must
	// satisfy before it is sealed (the one seal --push sends to).
	Remote string
}

// ErrNotIntact is returned by Seal for a ledger that does not verify.
var ErrNotIntact = errors.New("the ledger does not verify")

// Seal verifies the ledger and records a checkpoint of its complete lines
// under CheckpointRef. It returns the checkpoint and the verify report it
// rests on.
func Seal(o SealOptions) (*Checkpoint, *VerifyReport, error) {
	vo := VerifyOptions{Workspace: o.Workspace, Ledger: o.Ledger, NoDrift: true, Progress: o.Progress, Remote: o.Remote, NoRemote: o.Remote == ""}
	ws, path := vo.paths()
	repo, err := gitRepo(ws)
	if err != nil {
		return nil, nil, err
	}
	if repo == nil {
		return nil, nil, fmt.Errorf("seal needs a git repository: %s is not in one", ws)
	}
	key, err := ledgerKey(repo, path)
	if err != nil {
		return nil, nil, err
	}
	prev, err := loadCheckpoints(repo, key)
	if err != nil {
		return nil, nil, err
	}
	// A new checkpoint stores the hashes of the lines after the last one,
	// when that one still holds and knows its own.
	from := 0
	var last *Checkpoint
	if len(prev) > 0 {
		last = prev[len(prev)-1]
	}
	if last != nil && last.lines != nil {
		from = last.Records
	}
	vo.wantSums, vo.sumsFrom = true, from
	rep, err := Verify(vo)
	if err != nil {
		return nil, nil, err
	}
	if !rep.Intact && !o.Force {
		return nil, rep, fmt.Errorf("%w: %s", ErrNotIntact, rep.FirstBad)
	}
	if last != nil && from > 0 {
		for _, c := range rep.Checkpoints {
			if c.Commit == last.Commit && !c.OK {
				from = 0 // forced over a broken checkpoint: store every line
			}
		}
	}
	if from == 0 && vo.sumsFrom != 0 {
		vo.sumsFrom = 0
		if rep, err = Verify(vo); err != nil {
			return nil, nil, err
		}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	cp := &Checkpoint{
		Format: checkpointFormat, Ledger: key, Records: rep.Lines, Bytes: rep.Bytes,
		SHA256: rep.fullSHA, LastLine: rep.lastLink, Time: now.UTC().Truncate(time.Second),
		Head: headOf(repo), LinesFrom: from,
	}
	commit, err := writeCheckpoint(repo, cp, rep.sums)
	if err != nil {
		return nil, rep, err
	}
	cp.Commit = commit
	// The ref lives in .git, which a shell can rewrite: keep the seal's
	// digest outside the workspace too, so verify notices the ref lost.
	if err := saveAnchor(ws, cp); err != nil {
		return cp, rep, fmt.Errorf("sealed as %s, but the anchor outside the workspace could not be kept: %w", commit, err)
	}
	return cp, rep, nil
}

// Checkpoints lists the checkpoints of the ledger, oldest first.
func Checkpoints(workspace, ledger string) ([]*Checkpoint, error) {
	vo := VerifyOptions{Workspace: workspace, Ledger: ledger}
	ws, path := vo.paths()
	repo, err := gitRepo(ws)
	if err != nil || repo == nil {
		return nil, err
	}
	key, err := ledgerKey(repo, path)
	if err != nil {
		return nil, err
	}
	return loadCheckpoints(repo, key)
}
