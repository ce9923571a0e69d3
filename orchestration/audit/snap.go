package audit

import (
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// Snapshots (the line fingerprints of a recorded content, which blame
// follows lines with) live in package snap, which a hook process links
// without the rest of audit. These are their names here.

// Capture snapshots files as records of their changes are appended
// (snap.Capture).
type Capture = snap.Capture

// NewCapture returns a Capture for the workspace whose ledger is at ledger.
func NewCapture(workspace, ledger string) *Capture { return snap.NewCapture(workspace, ledger) }

func fingerprints(lines [][]byte) []uint64               { return snap.Fingerprints(lines) }
func validSHA(s string) bool                             { return snap.ValidSHA(s) }
func snapPath(indexDir, sha string) string               { return snap.Path(indexDir, sha) }
func readSnapshot(indexDir, sha string) ([]uint64, bool) { return snap.Read(indexDir, sha) }
