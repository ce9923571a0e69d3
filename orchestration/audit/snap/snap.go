// Package snap keeps blame's line snapshots: for a content whose SHA-256 a
// ledger record names, the fingerprints of its lines, under
// <index dir>/snap/<sha256>. Package audit reads them (blame); Capture
// writes them at trace time. It is its own package so that a hook process,
// which records changes, links it without the rest of audit.
//
// The ledger holds a hash per recorded range, not per line, so on its own
// it cannot say which lines of a many-line range survive a later edit.
// Whenever intentgate has in hand a file's bytes that hash to a record's
// after_sha256 (at trace time through Capture, from the content the change
// wrote; when blame reads the file it blames), it keeps that content's line
// fingerprints. Nothing reads a file again only to snapshot it. A snapshot
// is checked against the ledger where the ledger can check it (blame
// re-hashes recorded ranges that are still whole), is local, and is never
// needed: without it blame falls back on what the ledger alone proves.
package snap

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/orchestration"
)

// Magic opens every snapshot file.
const Magic = "IGSNAP01"

// IndexDirName is the ledger index's directory in .orchestration/.
const IndexDirName = "index"

// IndexDir is the index directory of the ledger at ledger: .orchestration/
// index beside the workspace's ledger, LEDGER.index beside any other.
func IndexDir(ledger string) string {
	d := filepath.Dir(ledger)
	if filepath.Base(d) == orchestration.DirName {
		return filepath.Join(d, IndexDirName)
	}
	return ledger + "." + IndexDirName
}

// LineFP is a line's fingerprint: the first 8 bytes of the SHA-256 of the
// line (carriage return dropped) and its "\n", i.e. of a one-line range.
func LineFP(line []byte) uint64 {
	var buf [256]byte
	return lineFP(line, &buf)
}

// lineFP is LineFP hashing a line shorter than buf in buf (most are), so
// that no hasher is allocated per line.
func lineFP(line []byte, buf *[256]byte) uint64 {
	if len(line) < len(buf) {
		n := copy(buf[:], line)
		buf[n] = '\n'
		sum := sha256.Sum256(buf[:n+1])
		return binary.BigEndian.Uint64(sum[:8])
	}
	h := sha256.New()
	h.Write(line)
	h.Write([]byte{'\n'})
	var sum [32]byte
	h.Sum(sum[:0])
	return binary.BigEndian.Uint64(sum[:8])
}

// Fingerprints are the LineFP of each line.
func Fingerprints(lines [][]byte) []uint64 {
	fps := make([]uint64, len(lines))
	var buf [256]byte
	for i, l := range lines {
		fps[i] = lineFP(l, &buf)
	}
	return fps
}

// ValidSHA reports a SHA-256 in hexadecimal.
func ValidSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Path is the snapshot file of the content hashing to sha.
func Path(indexDir, sha string) string {
	return filepath.Join(indexDir, "snap", sha[:2], sha)
}

// Read returns the fingerprints stored for sha; false when there are none
// or the file is not a whole snapshot.
func Read(indexDir, sha string) ([]uint64, bool) {
	if !ValidSHA(sha) {
		return nil, false
	}
	b, err := os.ReadFile(Path(indexDir, sha))
	if err != nil || len(b) < 12 || string(b[:8]) != Magic {
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

// Write stores the fingerprints of content, which must hash to sha.
func Write(indexDir, sha string, content []byte) error {
	if !ValidSHA(sha) || SHA256Hex(content) != sha {
		return errors.New("snapshot: content does not match its hash")
	}
	return WriteHashed(indexDir, sha, content)
}

// WriteHashed is Write for content the caller has just hashed to sha
// itself.
func WriteHashed(indexDir, sha string, content []byte) error {
	return writeFingerprints(indexDir, sha, Fingerprints(SplitLines(content)))
}

// writeFingerprints stores fps as the snapshot of the content hashing to
// sha.
func writeFingerprints(indexDir, sha string, fps []uint64) error {
	if !ValidSHA(sha) {
		return errors.New("snapshot: not a content hash")
	}
	p := Path(indexDir, sha)
	b := make([]byte, 0, 12+8*len(fps))
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fps)))
	for _, f := range fps {
		b = binary.LittleEndian.AppendUint64(b, f)
	}
	return writeNew(p, b)
}

// writeNew writes a snapshot file that is not there yet, in place: a new
// name needs no temporary file and rename to keep readers from a half
// written one, since Read takes only a file of exactly the length its count
// gives, and a half written one (a crash, a reader too early) reads as
// missing. A file already there holding exactly b (the same content,
// snapshotted before, since the name is its hash) is kept; any other, left
// by a crash, is replaced atomically.
func writeNew(p string, b []byte) error {
	err := createWrite(p, b)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		err = createWrite(p, b)
	}
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(p); serr == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(b)) {
			// A crash may leave the right length with other bytes
			// (blocks never written): compare, which is rare and cheap
			// (8 bytes a line), rather than trust the length.
			if old, rerr := os.ReadFile(p); rerr == nil && bytes.Equal(old, b) {
				return nil
			}
		}
		return WriteAtomic(p, b)
	}
	return err
}

// Capture snapshots files as records of their changes are appended, so that
// blame can follow every line through every later edit, whatever happens to
// the file afterwards. It has the trace policy's recorder method; give it to
// the trace policy's Then list.
type Capture struct {
	workspace string
	indexDir  string
	recent    recent
}

// NewCapture returns a Capture for the workspace whose ledger is at ledger.
func NewCapture(workspace, ledger string) *Capture {
	return &Capture{workspace: workspace, indexDir: IndexDir(ledger)}
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
		if content, err := ReadRooted(root, f.Path); err == nil && SHA256Hex(content) == rec.Meta.AfterSHA256 {
			Write(c.indexDir, rec.Meta.AfterSHA256, content)
		}
	}
	return nil
}

// RecordedContent snapshots the content a change left, from the bytes the
// trace has in hand (hashed once, when the change was made, to the record's
// after_sha256): no file is read again. The snapshot file is a cache, written
// without fsync. after must not change afterwards: the Capture keeps it for
// a while, to snapshot the file's next version from it.
func (c *Capture) RecordedContent(rec *orchestration.Record, _ []byte, after []byte) error {
	if rec == nil || rec.Meta == nil || !isChange(rec) || rec.Meta.Mutation == orchestration.MutationDelete {
		return nil
	}
	if orchestration.CheckIntact(filepath.Dir(c.indexDir), filepath.Base(c.indexDir)) != nil {
		return nil
	}
	sha := rec.Meta.AfterSHA256
	if !ValidSHA(sha) {
		return nil
	}
	// The previous version's fingerprints, when this process snapshotted
	// it, give those of the lines the change left alone.
	before := ""
	if rec.Meta.Mutation == orchestration.MutationModify {
		before = rec.Meta.BeforeSHA256
	}
	fps := c.recent.fingerprints(before, after)
	if writeFingerprints(c.indexDir, sha, fps) == nil {
		c.recent.keep(sha, after, fps)
	}
	return nil
}

// Keep snapshots content, as Recorded does for a file that still holds what
// its record left. For tools that know a content without a file on disk
// (bench/genledger simulating trace-time capture).
func (c *Capture) Keep(content []byte) error {
	return Write(c.indexDir, SHA256Hex(content), content)
}

// isChange reports a record of a change (not a refusal).
func isChange(rec *orchestration.Record) bool {
	if rec.Meta == nil {
		return len(rec.Files) > 0
	}
	return rec.Meta.Decision != orchestration.DecisionDeny && rec.Meta.Mutation != orchestration.MutationDenial
}

// SplitLines cuts content into lines without their "\n" and a final "\r"
// (orchestration.SplitLines, the lines the ledger's ranges count).
func SplitLines(content []byte) [][]byte { return orchestration.SplitLines(content) }

// ReadRooted reads the regular file p inside root, without blocking on a
// FIFO or following a final symlink.
func ReadRooted(root *os.Root, p string) ([]byte, error) {
	f, err := root.OpenFile(filepath.FromSlash(p), os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(f)
}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// WriteAtomic replaces path with data (no fsync: a snapshot is a cache).
func WriteAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
