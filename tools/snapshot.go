package tools

import (
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/tools/picture"
)

// The workspace pictures of execute_command live in package picture, which
// hook processes link without the tools; these are their names here.
type (
	Snapshot       = picture.Snapshot
	StoredSnapshot = picture.StoredSnapshot
	StoredFile     = picture.StoredFile
	Change         = picture.Change
	Unseen         = picture.Unseen
)

// TakeSnapshot pictures the workspace at dir (picture.TakeSnapshot).
func TakeSnapshot(dir string) (*Snapshot, error) { return picture.TakeSnapshot(dir) }

// Picture is the workspace at dir before a command (picture.Picture).
func Picture(dir string) (*StoredSnapshot, error) { return picture.Picture(dir) }

// Changes is what changed in the workspace at dir since before
// (picture.Changes).
func Changes(dir string, before *StoredSnapshot) ([]engine.FileChange, error) {
	return picture.Changes(dir, before)
}
