// Package picture takes cheap pictures of a workspace (stat data of every
// file, the content of the small ones) and works out what changed between a
// picture and the workspace now: what a shell command did, whoever ran it.
// A picture can be stored (StoredSnapshot) so that an external agent's
// pre-tool hook takes it and its post-tool hook, another process, compares.
//
// It is its own package, with no dependency beyond the engine's types, so
// that a hook process links it without the tool implementations.
package picture

import (
	"errors"
	"io/fs"

	"github.com/intentgate/intentgate/engine"
)

// What a picture keeps of file contents, so that a changed file's old
// content is known (for its ledger ranges, and to restore it under
// on_violation: revert): files up to pictureKeepFile, pictureKeepTotal in
// all. The same limits apply whichever front door the command came through.
const (
	pictureKeepFile  = 1 << 20
	pictureKeepTotal = 32 << 20
)

// Picture is the workspace at dir before a command, in the storable form an
// external agent's pre-tool event keeps for its post event.
func Picture(dir string) (*StoredSnapshot, error) {
	snap, err := TakeSnapshot(dir)
	if err != nil {
		return nil, err
	}
	budget := int64(pictureKeepTotal)
	return snap.Store(func(rel string, size int64) bool {
		if size > pictureKeepFile || size > budget {
			return false
		}
		budget -= size
		return true
	}), nil
}

// Changes is what changed in the workspace at dir since the picture before:
// the one place where what a command did is worked out. A file whose stat
// data changed while its content hash did not (touched, rewritten with the
// same bytes) is not a change; what the walk could not see may hide any
// change at all, so it is reported as uninspected.
func Changes(dir string, before *StoredSnapshot) ([]engine.FileChange, error) {
	after, err := TakeSnapshot(dir)
	if err != nil {
		return nil, err
	}
	var out []engine.FileChange
	for _, ch := range before.Load(dir).Diff(after) {
		if ch.Existed && !ch.Known && !ch.Deleted && ch.Unreadable == "" && ch.Link == "" {
			if f, ok := before.Files[ch.Path]; ok && f.Link == "" && f.SHA256 != "" && f.SHA256 == engine.Hash(ch.After) {
				continue
			}
		}
		fc := engine.FileChange{Path: ch.Path, Before: ch.Before, After: ch.After,
			Existed: ch.Existed, Deleted: ch.Deleted}
		if !ch.Known {
			fc.BeforeUnknown = true
			fc.Reason = "old content unknown (not kept in the snapshot): the whole file is recorded"
		}
		if ch.Link != "" {
			fc.Reason = "now a symbolic link to " + ch.Link
		}
		if ch.Unreadable != "" {
			fc.Uninspected = true
			fc.Reason = "changed, but its new content cannot be read: " + ch.Unreadable
		}
		out = append(out, fc)
	}
	for _, u := range after.Unseen() {
		out = append(out, engine.FileChange{Path: u.Path, Uninspected: true,
			Reason: "cannot be inspected after the command: " + u.Why})
	}
	return out, nil
}

// unwrapPath drops the *fs.PathError wrapper, whose path is the internal
// absolute one.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
