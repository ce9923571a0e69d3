package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/orchestration"
)

// Snapshots: the ledger holds a hash per recorded range, not per line, so on
// its own it cannot say which lines of a many-line range survive a later
// edit. Whenever intentgate has in hand a file's bytes that hash to a
// record's after_sha256 (at trace time through Capture, from the content the
// change wrote; when blame reads the file it blames), it keeps that
// content's line fingerprints under snap/<sha256 of the content>. Nothing
// reads a file again only to snapshot it (building the index reads no file
// of the workspace). A snapshot is checked against the ledger where
// the ledger can check it (blame re-hashes recorded ranges that are still
// whole), is local, and is never needed: without it blame falls back on what
// the ledger alone proves.
const snapMagic = "IGSNAP01"

// lineFP is a line's fingerprint: the first 8 bytes of the SHA-256 of the
// line (carriage return dropped) and its "\n", i.e. of a one-line range.
func lineFP(line []byte) uint64 {
	h := sha256.New()
	h.Write(line)
	h.Write([]byte{'\n'})
	var sum [32]byte
	h.Sum(sum[:0])
	return binary.BigEndian.Uint64(sum[:8])
}

func fingerprints(lines [][]byte) []uint64 {
	fps := make([]uint64, len(lines))
	for i, l := range lines {
		fps[i] = lineFP(l)
	}
	return fps
}

func validSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func snapPath(indexDir, sha string) string {
	return filepath.Join(indexDir, "snap", sha[:2], sha)
}

func readSnapshot(indexDir, sha string) ([]uint64, bool) {
	if !validSHA(sha) {
		return nil, false
	}
	b, err := os.ReadFile(snapPath(indexDir, sha))
	if err != nil || len(b) < 12 || string(b[:8]) != snapMagic {
		return nil, false
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) != 12+8*n {
		return nil, false
	}
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = binary.LittleEndian.Uint64(b[12+8*i:])
	}
	return fps, true
}

// writeSnapshot stores the fingerprints of content, which must hash to sha.
func writeSnapshot(indexDir, sha string, content []byte) error {
	if !validSHA(sha) || sha256Hex(content) != sha {
		return errors.New("snapshot: content does not match its hash")
	}
	return writeSnapshotHashed(indexDir, sha, content)
}

// writeSnapshotHashed is writeSnapshot for content the caller has just
// hashed to sha itself.
func writeSnapshotHashed(indexDir, sha string, content []byte) error {
	if !validSHA(sha) {
		return errors.New("snapshot: not a content hash")
	}
	p := snapPath(indexDir, sha)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	fps := fingerprints(splitLines(content))
	b := make([]byte, 0, 12+8*len(fps))
	b = append(b, snapMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fps)))
	for _, f := range fps {
		b = binary.LittleEndian.AppendUint64(b, f)
	}
	return writeAtomic(p, b)
}

// Capture snapshots files as records of their changes are appended, so that
// blame can follow every line through every later edit, whatever happens to
// the file afterwards. It has the trace policy's recorder method; give it to
// the trace policy's Then list.
type Capture struct {
	workspace string
	indexDir  string
}

// NewCapture returns a Capture for the workspace whose ledger is at ledger.
func NewCapture(workspace, ledger string) *Capture {
	return &Capture{workspace: workspace, indexDir: indexDir(ledger)}
}

// Recorded snapshots the files rec changed if they still hold what rec says
// it left. Failing to is not an error: snapshots are a cache.
func (c *Capture) Recorded(rec *orchestration.Record, _ []byte) error {
	if rec == nil || rec.Meta == nil || !isChange(rec) || rec.Meta.Mutation == orchestration.MutationDelete {
		return nil
	}
	if orchestration.CheckIntact(filepath.Dir(c.indexDir), filepath.Base(c.indexDir)) != nil {
		return nil // a cache: skipping it is safe, writing through a link is not
	}
	root, err := os.OpenRoot(c.workspace)
	if err != nil {
		return nil
	}
	defer root.Close()
	for _, f := range rec.Files {
		if content, err := readRooted(root, f.Path); err == nil && sha256Hex(content) == rec.Meta.AfterSHA256 {
			writeSnapshot(c.indexDir, rec.Meta.AfterSHA256, content)
		}
	}
	return nil
}

// RecordedContent snapshots the content a change left, from the bytes the
// trace has in hand (hashed once, when the change was made, to the record's
// after_sha256): no file is read again. The snapshot file is a cache, written
// without fsync.
func (c *Capture) RecordedContent(rec *orchestration.Record, _ []byte, after []byte) error {
	if rec == nil || rec.Meta == nil || !isChange(rec) || rec.Meta.Mutation == orchestration.MutationDelete {
		return nil
	}
	if orchestration.CheckIntact(filepath.Dir(c.indexDir), filepath.Base(c.indexDir)) != nil {
		return nil
	}
	writeSnapshotHashed(c.indexDir, rec.Meta.AfterSHA256, after)
	return nil
}

// Keep snapshots content, as Recorded does for a file that still holds what
// its record left. For tools that know a content without a file on disk
// (bench/genledger simulating trace-time capture).
func (c *Capture) Keep(content []byte) error {
	return writeSnapshot(c.indexDir, sha256Hex(content), content)
}
