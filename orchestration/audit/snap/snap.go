// Package snap keeps blame's line snapshots: for a content whose SHA-256 a
// ledger record names, the fingerprints of its lines, keyed by that hash in
// the packs of <index dir>/snap/ (pack.go; older workspaces also hold one
// file per content, snap/xx/<sha256>, which are still read). Package audit
// reads them (blame); Capture writes them at trace time. It is its own package so that a hook process,
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
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

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

// Path is the file a snapshot of the content hashing to sha had before
// snapshots went to packs; workspaces may still hold such files, which
// readers still take.
func Path(indexDir, sha string) string {
	return filepath.Join(indexDir, "snap", sha[:2], sha)
}

// Read returns the fingerprints stored for sha; false when there are none
// or none that checks. To look up more than one, open a Store.
func Read(indexDir, sha string) ([]uint64, bool) {
	s := OpenStore(indexDir)
	defer s.Close()
	return s.Read(sha)
}

// readFile reads a snapshot from its own file (Path), as they were kept
// before packs: Magic, a little-endian count, the fingerprints. A file of
// any other length is not a snapshot.
func readFile(indexDir, sha string) ([]uint64, bool) {
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

// Write stores the fingerprints of content, which must hash to sha. To
// store more than one, open a Store.
func Write(indexDir, sha string, content []byte) error {
	s := OpenStore(indexDir)
	defer s.Close()
	return s.Write(sha, content)
}

// WriteHashed is Write for content the caller has just hashed to sha
// itself.
func WriteHashed(indexDir, sha string, content []byte) error {
	s := OpenStore(indexDir)
	defer s.Close()
	return s.writeFingerprints(sha, Fingerprints(SplitLines(content)))
}

// Store reads and writes the snapshots of one index directory. Its first
// lookup reads the headers of every pack once; later ones read one record
// each. It is safe for concurrent use.
type Store struct {
	indexDir string
	w        packWriter
	mu       sync.Mutex
	px       *packIndex
}

// OpenStore returns the Store of indexDir. It reads nothing yet.
func OpenStore(indexDir string) *Store {
	return &Store{indexDir: indexDir, w: packWriter{indexDir: indexDir}}
}

func (s *Store) index() *packIndex {
	if s.px == nil {
		s.px = openPackIndex(s.indexDir)
	}
	return s.px
}

// Read returns the fingerprints stored for sha, from a pack or from a file
// of its own; false when there are none that check.
func (s *Store) Read(sha string) ([]uint64, bool) {
	sum, ok := sumOf(sha)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	fps, ok := s.index().read(&sum)
	s.mu.Unlock()
	if ok {
		return fps, true
	}
	return readFile(s.indexDir, sha)
}

// Write stores the fingerprints of content, which must hash to sha, unless
// a snapshot of it is there already.
func (s *Store) Write(sha string, content []byte) error {
	if !ValidSHA(sha) || SHA256Hex(content) != sha {
		return errors.New("snapshot: content does not match its hash")
	}
	if _, ok := s.Read(sha); ok {
		return nil
	}
	return s.writeFingerprints(sha, Fingerprints(SplitLines(content)))
}

// writeFingerprints appends fps as the snapshot of the content hashing to
// sha.
func (s *Store) writeFingerprints(sha string, fps []uint64) error {
	sum, ok := sumOf(sha)
	if !ok {
		return errors.New("snapshot: not a content hash")
	}
	if err := s.w.append(appendRecord(make([]byte, 0, recordLen(len(fps))), &sum, fps)); err != nil {
		return err
	}
	s.mu.Lock()
	if s.px != nil {
		// Readers of this Store see it too; the index only grows by
		// what this Store wrote, which it looks up by reading again.
		s.px.written[sum] = fps
	}
	s.mu.Unlock()
	return nil
}

// Close closes the packs.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.px != nil {
		s.px.close()
		s.px = nil
	}
	s.mu.Unlock()
	return s.w.Close()
}

// Capture snapshots files as records of their changes are appended, so that
// blame can follow every line through every later edit, whatever happens to
// the file afterwards. It has the trace policy's recorder method; give it to
// the trace policy's Then list.
type Capture struct {
	workspace string
	indexDir  string
	store     *Store
	recent    recent
}

// NewCapture returns a Capture for the workspace whose ledger is at ledger.
func NewCapture(workspace, ledger string) *Capture {
	d := IndexDir(ledger)
	return &Capture{workspace: workspace, indexDir: d, store: OpenStore(d)}
}

// Flush does nothing: snapshots are appended as they come. It makes a
// Capture a batching recorder, so that the trace closes it.
func (c *Capture) Flush() error { return nil }

// Close closes the pack the Capture appends to; a later snapshot opens it
// again.
func (c *Capture) Close() error { return c.store.Close() }

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
	sha := rec.Meta.AfterSHA256
	if !ValidSHA(sha) || c.recent.has(sha) {
		return nil
	}
	for _, f := range rec.Files {
		if content, err := ReadRooted(root, f.Path); err == nil && SHA256Hex(content) == sha {
			c.store.writeFingerprints(sha, Fingerprints(SplitLines(content)))
			break
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
	if !ValidSHA(sha) || c.recent.has(sha) {
		return nil // this process snapshotted this content a moment ago
	}
	// The previous version's fingerprints, when this process snapshotted
	// it, give those of the lines the change left alone.
	before := ""
	if rec.Meta.Mutation == orchestration.MutationModify {
		before = rec.Meta.BeforeSHA256
	}
	fps := c.recent.fingerprints(before, after)
	if c.store.writeFingerprints(sha, fps) == nil {
		c.recent.keep(sha, after, fps)
	}
	return nil
}

// Keep snapshots content, as Recorded does for a file that still holds what
// its record left. For tools that know a content without a file on disk
// (bench/genledger simulating trace-time capture).
func (c *Capture) Keep(content []byte) error {
	return c.store.Write(SHA256Hex(content), content)
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
