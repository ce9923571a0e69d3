package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// The index is derived from the ledger and only narrows which ledger lines a
// query reads; every record shown is read from the ledger again and checked.
// It lives in IndexDirName next to the ledger and can be deleted at any time.
//
// Layout: index.json (the manifest: how many bytes and lines of the ledger
// are indexed, and the chain link of the last indexed line, which is how a
// rewritten or truncated ledger is noticed), immutable segment files, each
// covering a run of lines, and snap/ (line fingerprints of file contents, see
// blame.go and package snap). When the ledger grew, a segment for the new lines is added, and
// small trailing segments are merged so there are O(log n) of them. Segment
// files are never rewritten, only replaced through the manifest (renamed into
// place), so concurrent readers and updaters need no lock; an updater that
// loses a race leaves an unreferenced segment, removed by a later update.
const IndexDirName = snap.IndexDirName

const (
	indexFormat  = 1
	manifestName = "index.json"
	segMagic     = "IGIDX001"
	segHeader    = 8 + 4*6 + 8 + 8*6
	lineEntry    = 24
	idEntry      = 20
	keyEntry     = 16
	rangeEntry   = 16
)

// Keys a segment's postings are filed under.
const (
	keyPath     = "p:"
	keyIntent   = "i:"
	keySession  = "s:"
	keyModel    = "m:"
	keyTool     = "t:"
	keyDenial   = "d:" // all refusals; "d:CODE" per code
	keyViolate  = "v:"
	keyChange   = "c:" // every change (not a refusal)
	flagParsed  = 1
	flagDenial  = 2
	flagViolate = 4
	flagChange  = 8
)

type manifest struct {
	Format      int          `json:"format"`
	LedgerBytes int64        `json:"ledger_bytes"`
	LedgerLines int          `json:"ledger_lines"`
	LastLine    string       `json:"last_line"`
	Segments    []segmentRef `json:"segments"`
}

type segmentRef struct {
	Name      string `json:"name"`
	FirstLine int    `json:"first_line"`
	Lines     int    `json:"lines"`
	FirstOff  int64  `json:"first_off"`
	Bytes     int64  `json:"bytes"`
}

// Index answers which ledger lines name a path, intent, session, model,
// tool, denial code or record id, and which lines recorded a range with a
// given content hash.
type Index struct {
	dir       string
	ledger    string
	workspace string
	man       manifest
	segs      []*segment
	// Built says how the index was brought up to date by OpenIndex:
	// "current", "extended" or "rebuilt".
	Built string

	chunkSize int // bytes per chunk read (0: the default; tests cut smaller)
}

// indexDir is where the index of the ledger at path lives.
func indexDir(ledger string) string { return snap.IndexDir(ledger) }

// OpenIndex opens the index of the ledger, bringing it up to date first:
// extended by the lines appended since, or rebuilt from scratch when the
// ledger no longer starts with what was indexed. workspace is where the
// ledger's files are, for content snapshots ("" for none).
func OpenIndex(ledger, workspace string) (*Index, error) {
	ix := &Index{dir: indexDir(ledger), ledger: ledger, workspace: workspace}
	// The index lives in .orchestration, where an agent's command may have
	// put a symlink: never write through one.
	if err := orchestration.CheckIntact(filepath.Dir(ix.dir), filepath.Base(ix.dir)); err != nil {
		return nil, noIndex(err)
	}
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		return nil, noIndex(err)
	}
	if err := ix.update(false); err != nil {
		return nil, err
	}
	return ix, nil
}

// Rebuild throws the index away and builds it again from the ledger.
func (ix *Index) Rebuild() error {
	ix.Close()
	return ix.update(true)
}

// Close closes the segment files.
func (ix *Index) Close() error {
	for _, s := range ix.segs {
		s.f.Close()
	}
	ix.segs = nil
	return nil
}

// Lines is how many complete ledger lines the index covers.
func (ix *Index) Lines() int { return ix.man.LedgerLines }

func (ix *Index) update(rebuild bool) error {
	man, ok := ix.readManifest()
	fi, err := os.Stat(ix.ledger)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if ok && !rebuild {
		ok = ix.stillPrefix(man, fi.Size())
	}
	ix.Built = "current"
	if !ok || rebuild {
		man = manifest{Format: indexFormat}
		ix.Built = "rebuilt"
	}
	if fi.Size() > man.LedgerBytes || ix.Built != "current" {
		seg, last, err := ix.build(man.LedgerLines+1, man.LedgerBytes, 0)
		if err != nil {
			return err
		}
		if seg != nil {
			man.Segments = append(man.Segments, *seg)
			man.LedgerBytes = seg.FirstOff + seg.Bytes
			man.LedgerLines = seg.FirstLine + seg.Lines - 1
			man.LastLine = last
			if ix.Built == "current" {
				ix.Built = "extended"
			}
		}
		// Merge small trailing segments, so lookups touch few files.
		for n := len(man.Segments); n >= 2 && man.Segments[n-1].Lines*2 >= man.Segments[n-2].Lines; n = len(man.Segments) {
			a := man.Segments[n-2]
			b := man.Segments[n-1]
			merged, _, err := ix.build(a.FirstLine, a.FirstOff, b.FirstOff+b.Bytes)
			if err != nil {
				return err
			}
			man.Segments = append(man.Segments[:n-2], *merged)
		}
		if err := ix.writeManifest(&man); err != nil {
			return noIndex(err)
		}
	}
	ix.clean(&man)
	ix.man = man
	for _, ref := range man.Segments {
		s, err := openSegment(filepath.Join(ix.dir, ref.Name), ref)
		if err != nil {
			ix.Close()
			if !rebuild {
				return ix.update(true) // a damaged index is rebuilt, never trusted
			}
			return err
		}
		ix.segs = append(ix.segs, s)
	}
	return nil
}

func (ix *Index) readManifest() (manifest, bool) {
	var man manifest
	b, err := os.ReadFile(filepath.Join(ix.dir, manifestName))
	if err != nil || json.Unmarshal(b, &man) != nil || man.Format != indexFormat || man.LedgerBytes < 0 {
		return manifest{}, false
	}
	next, off := 1, int64(0)
	for _, s := range man.Segments {
		if s.FirstLine != next || s.FirstOff != off || s.Lines <= 0 || strings.ContainsAny(s.Name, `/\`) {
			return manifest{}, false
		}
		next, off = s.FirstLine+s.Lines, off+s.Bytes
	}
	if next-1 != man.LedgerLines || off != man.LedgerBytes {
		return manifest{}, false
	}
	return man, true
}

// stillPrefix reports whether the ledger still has, at the indexed length,
// the line the index saw last.
func (ix *Index) stillPrefix(man manifest, size int64) bool {
	if man.LedgerBytes == 0 {
		return true
	}
	if size < man.LedgerBytes {
		return false
	}
	f, err := os.Open(ix.ledger)
	if err != nil {
		return false
	}
	defer f.Close()
	last, ok := lineBefore(f, man.LedgerBytes)
	return ok && orchestration.LineLink(last) == man.LastLine
}

// lineBefore returns the line that ends (with its newline) at end.
func lineBefore(r io.ReaderAt, end int64) ([]byte, bool) {
	var buf []byte
	for chunk := int64(4096); ; chunk *= 4 {
		start := max(end-chunk, 0)
		buf = make([]byte, end-start)
		if _, err := r.ReadAt(buf, start); err != nil {
			return nil, false
		}
		if len(buf) == 0 || buf[len(buf)-1] != '\n' {
			return nil, false
		}
		if i := bytes.LastIndexByte(buf[:len(buf)-1], '\n'); i >= 0 || start == 0 {
			return trimCR(buf[i+1 : len(buf)-1]), true
		}
	}
}

func (ix *Index) writeManifest(man *manifest) error {
	b, err := json.MarshalIndent(man, "", " ")
	if err != nil {
		return err
	}
	return snap.WriteAtomic(filepath.Join(ix.dir, manifestName), append(b, '\n'))
}

// clean removes segment files the manifest does not name, once they are old
// enough that no updater racing with this one can still be writing them.
func (ix *Index) clean(man *manifest) {
	keep := map[string]bool{}
	for _, s := range man.Segments {
		keep[s.Name] = true
	}
	entries, _ := os.ReadDir(ix.dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "seg-") || keep[e.Name()] {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(filepath.Join(ix.dir, e.Name())) // on Windows an open one stays; a later update removes it
		}
	}
}

// hashPrefix is the first 8 bytes of a "sha256:<hex>" content hash.
func hashPrefix(h string) (uint64, bool) {
	hx, ok := strings.CutPrefix(h, orchestration.HashPrefix)
	if !ok || len(hx) < 16 {
		return 0, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(hx[:16])); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:]), true
}

func denialCode(d json.RawMessage) string {
	if len(d) == 0 {
		return ""
	}
	var v struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(d, &v) != nil {
		return ""
	}
	return v.Error
}

// segment is an open segment file. The key table is read whole; the rest is
// read on demand.
type segment struct {
	ref                                   segmentRef
	f                                     *os.File
	firstLine, n, nIDs, nKeys, nRanges    int
	offLines, offIDs, offPosts, offRanges int64
	keyTab, keyBlob                       []byte
	rangeTab                              []byte // loaded by the first range lookup
}

func openSegment(path string, ref segmentRef) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := make([]byte, segHeader)
	if _, err := f.ReadAt(h, 0); err != nil || string(h[:8]) != segMagic {
		f.Close()
		return nil, errors.New("index: bad segment")
	}
	u32 := func(i int) int { return int(binary.LittleEndian.Uint32(h[8+4*i:])) }
	u64 := func(i int) int64 { return int64(binary.LittleEndian.Uint64(h[8+4*6+8+8*i:])) }
	s := &segment{ref: ref, f: f, firstLine: u32(0), n: u32(1), nIDs: u32(2), nKeys: u32(3), nRanges: u32(5)}
	s.offLines, s.offIDs, s.offPosts, s.offRanges = u64(0), u64(1), u64(4), u64(5)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// Every section where the header says, in order, of the size its count
	// says, and the file ending with the last: anything else is damage.
	nPosts := u32(4)
	bounds := []int64{u64(0), u64(1), u64(2), u64(3), u64(4), u64(5), fi.Size()}
	sizes := []int64{int64(s.n) * lineEntry, int64(s.nIDs) * idEntry, int64(s.nKeys) * keyEntry, -1, int64(nPosts) * 4, int64(s.nRanges) * rangeEntry}
	ok := bounds[0] == segHeader
	for i, want := range sizes {
		got := bounds[i+1] - bounds[i]
		ok = ok && got >= 0 && (want < 0 || got == want)
	}
	if !ok || s.firstLine != ref.FirstLine || s.n != ref.Lines {
		f.Close()
		return nil, errors.New("index: segment does not match the manifest")
	}
	s.keyTab = make([]byte, u64(3)-u64(2))
	s.keyBlob = make([]byte, u64(4)-u64(3))
	if _, err := f.ReadAt(s.keyTab, u64(2)); err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, err
	}
	if _, err := f.ReadAt(s.keyBlob, u64(3)); err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, err
	}
	if len(s.keyTab) != s.nKeys*keyEntry {
		f.Close()
		return nil, errors.New("index: bad segment")
	}
	return s, nil
}

func (s *segment) key(i int) string {
	e := s.keyTab[i*keyEntry:]
	off, n := binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:])
	if int(off+n) > len(s.keyBlob) {
		return ""
	}
	return string(s.keyBlob[off : off+n])
}

// postings returns the absolute line numbers filed under key.
func (s *segment) postings(key string) ([]int, error) {
	i := sort.Search(s.nKeys, func(i int) bool { return s.key(i) >= key })
	if i == s.nKeys || s.key(i) != key {
		return nil, nil
	}
	e := s.keyTab[i*keyEntry:]
	off, n := int64(binary.LittleEndian.Uint32(e[8:])), int(binary.LittleEndian.Uint32(e[12:]))
	if s.offPosts+4*(off+int64(n)) > s.offRanges {
		return nil, errIndexStale
	}
	buf := make([]byte, 4*n)
	if _, err := s.f.ReadAt(buf, s.offPosts+4*off); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	out := make([]int, n)
	for j := range out {
		rel := int(binary.LittleEndian.Uint32(buf[4*j:]))
		if rel >= s.n || (j > 0 && s.firstLine+rel <= out[j-1]) {
			return nil, errIndexStale
		}
		out[j] = s.firstLine + rel
	}
	return out, nil
}

// entry is one line's row of the line table.
type entry struct {
	Off   int64
	Size  int
	Flags uint32
	Time  time.Time
}

func decodeEntry(b []byte) entry {
	return entry{
		Off: int64(binary.LittleEndian.Uint64(b)), Size: int(binary.LittleEndian.Uint32(b[8:])),
		Flags: binary.LittleEndian.Uint32(b[12:]), Time: time.Unix(0, int64(binary.LittleEndian.Uint64(b[16:]))).UTC(),
	}
}

func (s *segment) entries(from, to int) ([]entry, error) {
	buf := make([]byte, (to-from)*lineEntry)
	if _, err := s.f.ReadAt(buf, s.offLines+int64((from-s.firstLine)*lineEntry)); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	out := make([]entry, to-from)
	for i := range out {
		out[i] = decodeEntry(buf[i*lineEntry:])
	}
	return out, nil
}

func (s *segment) findID(id uuid.UUID) (int, error) {
	buf := make([]byte, idEntry)
	var ioErr error
	i := sort.Search(s.nIDs, func(i int) bool {
		if _, err := s.f.ReadAt(buf, s.offIDs+int64(i*idEntry)); err != nil {
			ioErr = err
			return true
		}
		return bytes.Compare(buf[:16], id[:]) >= 0
	})
	if ioErr != nil {
		return 0, fmt.Errorf("index: %w", ioErr)
	}
	if i == s.nIDs {
		return 0, nil
	}
	if _, err := s.f.ReadAt(buf, s.offIDs+int64(i*idEntry)); err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	if !bytes.Equal(buf[:16], id[:]) {
		return 0, nil
	}
	rel := int(binary.LittleEndian.Uint32(buf[16:]))
	if rel >= s.n {
		return 0, errIndexStale
	}
	return s.firstLine + rel, nil
}

// rangeRef is a ledger line that recorded a range of n lines whose content
// hash starts with the looked-up prefix.
type rangeRef struct {
	Line int
	N    int
}

func (s *segment) lookupRange(h8 uint64) ([]rangeRef, error) {
	if s.nRanges == 0 {
		return nil, nil
	}
	if s.rangeTab == nil {
		s.rangeTab = make([]byte, s.nRanges*rangeEntry)
		if _, err := s.f.ReadAt(s.rangeTab, s.offRanges); err != nil {
			s.rangeTab = nil
			return nil, fmt.Errorf("index: %w", err)
		}
	}
	at := func(i int) uint64 { return binary.LittleEndian.Uint64(s.rangeTab[i*rangeEntry:]) }
	i := sort.Search(s.nRanges, func(i int) bool { return at(i) >= h8 })
	var out []rangeRef
	for ; i < s.nRanges && at(i) == h8; i++ {
		e := s.rangeTab[i*rangeEntry:]
		rel := int(binary.LittleEndian.Uint32(e[8:]))
		if rel >= s.n {
			return nil, errIndexStale
		}
		out = append(out, rangeRef{Line: s.firstLine + rel, N: int(binary.LittleEndian.Uint32(e[12:]))})
	}
	return out, nil
}

// Postings returns the ledger lines filed under key, in ledger order.
func (ix *Index) postings(key string) ([]int, error) {
	var out []int
	for _, s := range ix.segs {
		p, err := s.postings(key)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

func (ix *Index) segmentOf(line int) *segment {
	i := sort.Search(len(ix.segs), func(i int) bool { return ix.segs[i].firstLine+ix.segs[i].n > line })
	if i == len(ix.segs) || line < ix.segs[i].firstLine {
		return nil
	}
	return ix.segs[i]
}

func (ix *Index) entry(line int) (entry, error) {
	s := ix.segmentOf(line)
	if s == nil {
		return entry{}, fmt.Errorf("index: line %d is not indexed", line)
	}
	e, err := s.entries(line, line+1)
	if err != nil {
		return entry{}, err
	}
	return e[0], nil
}

// allEntries reads the line table of every segment, in ledger order.
func (ix *Index) allEntries(fn func(line int, e entry) error) error {
	for _, s := range ix.segs {
		es, err := s.entries(s.firstLine, s.firstLine+s.n)
		if err != nil {
			return err
		}
		for i, e := range es {
			if err := fn(s.firstLine+i, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// findID returns the ledger line of the record with the id, 0 if none.
func (ix *Index) findID(id string) (int, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return 0, nil
	}
	for _, s := range ix.segs {
		if line, err := s.findID(u); err != nil || line != 0 {
			return line, err
		}
	}
	return 0, nil
}

// ids is the set of every indexed record id.
func (ix *Index) ids() (map[uuid.UUID]bool, error) {
	have := map[uuid.UUID]bool{}
	for _, s := range ix.segs {
		tab := make([]byte, s.nIDs*idEntry)
		if _, err := s.f.ReadAt(tab, s.offIDs); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		for i := 0; i < s.nIDs; i++ {
			var id uuid.UUID
			copy(id[:], tab[i*idEntry:])
			have[id] = true
		}
	}
	return have, nil
}

func (ix *Index) lookupRange(h8 uint64) ([]rangeRef, error) {
	var out []rangeRef
	for _, s := range ix.segs {
		r, err := s.lookupRange(h8)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

// ErrNoIndex: the index cannot be written (a read-only checkout, say). The
// queries then read the whole ledger instead.
var ErrNoIndex = errors.New("index: cannot be written")

func noIndex(err error) error { return fmt.Errorf("%w: %v", ErrNoIndex, err) }

// errIndexStale: a line is not where the index says; the caller rebuilds.
var errIndexStale = errors.New("index: out of date with the ledger")

// ledgerReader reads records from the ledger at the offsets the index gives,
// checking each is a whole line.
type ledgerReader struct {
	ix   *Index
	f    *os.File
	size int64
}

func (ix *Index) reader() (*ledgerReader, error) {
	f, err := os.Open(ix.ledger)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return &ledgerReader{ix: ix, f: f, size: fi.Size()}, nil
}

func (r *ledgerReader) Close() error { return r.f.Close() }

// read returns the line's bytes (without newline) and its record.
func (r *ledgerReader) read(line int) ([]byte, *orchestration.Record, error) {
	e, err := r.ix.entry(line)
	if err != nil {
		return nil, nil, err
	}
	return r.readAt(e)
}

func (r *ledgerReader) readAt(e entry) ([]byte, *orchestration.Record, error) {
	if e.Size <= 0 || e.Off < 0 || e.Off+int64(e.Size) > r.size {
		return nil, nil, errIndexStale
	}
	buf := make([]byte, e.Size)
	if _, err := r.f.ReadAt(buf, e.Off); err != nil {
		return nil, nil, errIndexStale
	}
	if buf[len(buf)-1] != '\n' || (e.Off > 0 && !r.startsLine(e.Off)) {
		return nil, nil, errIndexStale
	}
	raw := trimCR(buf[:len(buf)-1])
	if bytes.IndexByte(raw, '\n') >= 0 {
		return nil, nil, errIndexStale
	}
	if e.Flags&flagParsed == 0 {
		return raw, nil, nil
	}
	rec, err := orchestration.ParseRecord(raw)
	if err != nil {
		return nil, nil, errIndexStale
	}
	return raw, rec, nil
}

func (r *ledgerReader) startsLine(off int64) bool {
	var b [1]byte
	_, err := r.f.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}

// withIndex runs fn with the ledger's index, rebuilding it once if fn finds
// it out of date.
func withIndex(ledger, workspace string, fn func(ix *Index) error) error {
	ix, err := OpenIndex(ledger, workspace)
	if err != nil {
		return err
	}
	defer ix.Close()
	err = fn(ix)
	if errors.Is(err, errIndexStale) {
		if err := ix.Rebuild(); err != nil {
			return err
		}
		err = fn(ix)
	}
	return err
}
