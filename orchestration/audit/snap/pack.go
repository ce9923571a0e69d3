package snap

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Snapshots are appended to packs, not written one file per version: on a
// file system where every new inode costs a search (ext4 without a journal
// scans the inodes freed in the last half minute on each create), a file per
// governed write was a third of a write's file creates.
//
// A pack is snap/pack (the one being appended to) or snap/pack-* (packs
// rolled aside once past packRollBytes). Every process appends to the same
// snap/pack, opened once with O_APPEND: each record goes to the kernel in
// one write, which a local file system appends whole, so processes need no
// lock between them. A record is self-delimiting and checked:
//
//	offset  size  field
//	0       8     recMagic
//	8       32    the content's SHA-256
//	40      4     n, the number of lines (little endian)
//	44      4     CRC-32C of bytes 0..44 (the header)
//	48      8n    the fingerprints (little endian)
//	48+8n   4     CRC-32C of bytes 0..48+8n (the whole record)
//
// Packs are derived data, written without fsync. A crash (or a full disk)
// can leave a record cut short, possibly followed by other processes'
// records: a reader skips a header that does not check and looks for the
// next recMagic, and a record whose CRC fails is not a snapshot. Nothing
// from the pack decides anything: blame re-hashes recorded ranges against
// the ledger where it can, and the files are in .orchestration, which agents
// may not write.
const (
	recMagic  = "IGSNPR01"
	recHeader = 48
	packName  = "pack"
	// packRollBytes is the size past which the pack being appended to is
	// renamed aside and a new one begun, so that no pack grows without end.
	packRollBytes = 64 << 20
	// maxLines bounds a record's line count (a 4 GiB file of empty lines
	// is past any blame); a header claiming more is garbage.
	maxLines = 1 << 29
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rollBytes is packRollBytes; tests lower it.
var rollBytes int64 = packRollBytes

// recordLen is the length of a record of n lines.
func recordLen(n int) int { return recHeader + 8*n + 4 }

// appendRecord appends the record of the content hashing to sum, whose
// lines have the fingerprints fps, to b.
func appendRecord(b []byte, sum *[32]byte, fps []uint64) []byte {
	start := len(b)
	b = append(b, recMagic...)
	b = append(b, sum[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(fps)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
	for _, f := range fps {
		b = binary.LittleEndian.AppendUint64(b, f)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseHeader reads a record header from h (recHeader bytes): the content
// hash and the line count; false when h is not a header that checks.
func parseHeader(h []byte) (sum [32]byte, n int, ok bool) {
	if len(h) < recHeader || string(h[:8]) != recMagic {
		return sum, 0, false
	}
	if crc32.Checksum(h[:44], castagnoli) != binary.LittleEndian.Uint32(h[44:]) {
		return sum, 0, false
	}
	n = int(binary.LittleEndian.Uint32(h[40:]))
	if n > maxLines {
		return sum, 0, false
	}
	copy(sum[:], h[8:40])
	return sum, n, true
}

// parseRecord checks a whole record (exactly recordLen bytes) of the content
// hashing to sum and returns its fingerprints.
func parseRecord(r []byte, sum *[32]byte) ([]uint64, bool) {
	hs, n, ok := parseHeader(r)
	if !ok || hs != *sum || len(r) != recordLen(n) {
		return nil, false
	}
	end := len(r) - 4
	if crc32.Checksum(r[:end], castagnoli) != binary.LittleEndian.Uint32(r[end:]) {
		return nil, false
	}
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = binary.LittleEndian.Uint64(r[recHeader+8*i:])
	}
	return fps, true
}

// packWriter appends records to snap/pack of one index directory. It keeps
// the pack open between appends: opening it creates no file once it exists.
type packWriter struct {
	mu        sync.Mutex
	indexDir  string
	f         *os.File
	nextRoll  int64 // the pack's size at which to roll it next
	appends   int   // since the pack was opened
	unchecked int   // bytes appended since the pack's size was asked
}

// A writer asks the pack's size every rollCheck appends, or once it has
// appended a 64th of the roll size since it last asked.
const rollCheck = 16

// open opens snap/pack for appending, creating it (and snap/) the first
// time. The path is resolved inside the index directory, never through a
// symlink out of it.
func (w *packWriter) open() error {
	root, err := os.OpenRoot(w.indexDir)
	if errors.Is(err, fs.ErrNotExist) {
		// The index is made on first use; callers have checked that the
		// directory it goes in is not a link.
		if err := os.MkdirAll(w.indexDir, 0o755); err != nil {
			return err
		}
		root, err = os.OpenRoot(w.indexDir)
	}
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Join("snap", packName)
	// Non-blocking: a FIFO there must not hang the write that
	// snapshots.
	const flags = os.O_WRONLY | os.O_APPEND | os.O_CREATE | fsx.NonBlock
	f, err := root.OpenFile(name, flags, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := root.MkdirAll("snap", 0o755); err != nil {
			return err
		}
		f, err = root.OpenFile(name, flags, 0o644)
	}
	if err != nil {
		return err
	}
	// A Root follows a symlink that stays inside it: the pack must be
	// the regular file at its name, or it could append to another
	// file of the index. A hard link is the same file at both names:
	// the pack must have no other.
	fi, err := f.Stat()
	if err == nil {
		var li os.FileInfo
		if li, err = root.Lstat(name); err == nil && (!fi.Mode().IsRegular() || !os.SameFile(fi, li) || openedLinks(f, fi) != 1) {
			err = fmt.Errorf("%s is not a regular file with one name (a symlink, hard link or special file is refused): remove it", filepath.Join(w.indexDir, name))
		}
	}
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.nextRoll, w.appends, w.unchecked = f, rollBytes, 0, 0
	return nil
}

// append writes one record in a single write.
func (w *packWriter) append(rec []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if _, err := w.f.Write(rec); err != nil {
		w.closeLocked()
		return err
	}
	// With O_APPEND the offset after the write is the pack's end. It is
	// asked every rollCheck appends, or after a large one, not after
	// each: a pack may outgrow the roll size by a few records.
	w.unchecked += len(rec)
	if w.appends++; w.appends%rollCheck == 0 || int64(w.unchecked) >= rollBytes/64 {
		w.unchecked = 0
		if end, err := w.f.Seek(0, io.SeekCurrent); err == nil && end >= w.nextRoll {
			w.roll(end)
		}
	}
	return nil
}

// roll renames the pack this writer appends to aside, if snap/pack is still
// that file (another process may have rolled it already), and closes it:
// the next append opens a new snap/pack. Losing the race to another roller
// at worst rolls a young pack aside early.
func (w *packWriter) roll(end int64) {
	p := filepath.Join(w.indexDir, "snap", packName)
	if cur, err := os.Lstat(p); err == nil {
		if mine, err := w.f.Stat(); err == nil && os.SameFile(cur, mine) {
			aside := fmt.Sprintf("%s-%x-%d", p, time.Now().UnixNano(), os.Getpid())
			if os.Rename(p, aside) != nil {
				// Windows refuses while another process has it open:
				// grow it a little more and try again then.
				w.nextRoll = end + rollBytes/4
				return
			}
		}
	}
	w.closeLocked()
}

func (w *packWriter) closeLocked() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// Close closes the pack; a later append opens it again.
func (w *packWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
	return nil
}

// isPackName reports a pack's file name.
func isPackName(name string) bool {
	return name == packName || strings.HasPrefix(name, packName+"-") && !strings.HasSuffix(name, idxSuffix)
}

// loc is where a record lies.
type loc struct {
	pack int
	off  int64
	n    int
}

// packIndex knows where every record of the packs of an index directory
// lies, by content hash. It is built once, from the records' headers only.
type packIndex struct {
	files []*os.File
	at    map[[32]byte][]loc
	// written holds what the Store appended since the index was built.
	written map[[32]byte][]uint64
}

// openPackIndex reads the headers of every pack in indexDir/snap.
func openPackIndex(indexDir string) *packIndex {
	px := &packIndex{at: map[[32]byte][]loc{}, written: map[[32]byte][]uint64{}}
	dir := filepath.Join(indexDir, "snap")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return px
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isPackName(e.Name()) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		px.files = append(px.files, f)
		i := len(px.files) - 1
		add := func(sum [32]byte, off int64, n int) {
			px.at[sum] = append(px.at[sum], loc{pack: i, off: off, n: n})
		}
		// A pack rolled aside no longer grows (but for a record or so
		// from processes that had it open): its headers are listed once
		// in PACK.idx, and only what follows them is scanned.
		rolled := e.Name() != packName
		from := int64(0)
		if rolled {
			from = readIdx(filepath.Join(dir, e.Name()+idxSuffix), fi.Size(), add)
		}
		var found []idxEntry
		resume := scanPack(f, from, fi.Size(), func(sum [32]byte, off int64, n int) {
			add(sum, off, n)
			if rolled && from == 0 {
				found = append(found, idxEntry{sum, off, n})
			}
		})
		if rolled && from == 0 && resume > 0 && writeIdx && realDirs(indexDir, dir) {
			WriteAtomic(filepath.Join(dir, e.Name()+idxSuffix), encodeIdx(found, resume))
		}
	}
	return px
}

// realDirs reports directories that are not symlinks: a reader writes an
// .idx only where the pack writer would write.
func realDirs(dirs ...string) bool {
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// idxSuffix names a rolled pack's list of headers; idxMagic opens it. It
// holds: idxMagic, the pack bytes it covers (8 bytes), a count, per record
// the content hash (32), its offset (8) and line count (4), and a CRC-32C
// of all before it, little endian. It is only a hint: every record found
// through it is read and checked as a whole, so a wrong list can only hide
// snapshots.
const (
	idxSuffix = ".idx"
	idxMagic  = "IGSNPX01"
	idxEntLen = 44
)

// writeIdx lets readers write a rolled pack's .idx; tests turn it off.
var writeIdx = true

type idxEntry struct {
	sum [32]byte
	off int64
	n   int
}

func encodeIdx(ents []idxEntry, covered int64) []byte {
	b := make([]byte, 0, 20+idxEntLen*len(ents)+4)
	b = append(b, idxMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(covered))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ents)))
	for _, e := range ents {
		b = append(b, e.sum[:]...)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.off))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.n))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// parseIdx calls add for each record an .idx lists and returns the pack
// bytes it covers; 0 (scan the whole pack) when b is not an .idx that
// checks, or lists records past size, the pack's length.
func parseIdx(b []byte, size int64, add func(sum [32]byte, off int64, n int)) int64 {
	if len(b) < 24 || string(b[:8]) != idxMagic {
		return 0
	}
	covered := int64(binary.LittleEndian.Uint64(b[8:]))
	count := int(binary.LittleEndian.Uint32(b[16:]))
	if covered < 0 || covered > size || count > (len(b)-24)/idxEntLen || len(b) != 24+idxEntLen*count {
		return 0
	}
	end := len(b) - 4
	if crc32.Checksum(b[:end], castagnoli) != binary.LittleEndian.Uint32(b[end:]) {
		return 0
	}
	ents := make([]idxEntry, count)
	for i := range ents {
		e := b[20+idxEntLen*i:]
		copy(ents[i].sum[:], e[:32])
		ents[i].off = int64(binary.LittleEndian.Uint64(e[32:]))
		ents[i].n = int(binary.LittleEndian.Uint32(e[40:]))
		if ents[i].off < 0 || ents[i].n > maxLines || ents[i].off+int64(recordLen(ents[i].n)) > covered {
			return 0
		}
	}
	for _, e := range ents {
		add(e.sum, e.off, e.n)
	}
	return covered
}

// readIdx reads the .idx at p (see parseIdx).
func readIdx(p string, size int64, add func(sum [32]byte, off int64, n int)) int64 {
	f, err := os.OpenFile(p, os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	// An entry per record of at least recordLen(0) bytes: an .idx longer
	// than its pack could list is not read.
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 24+idxEntLen*(size/int64(recordLen(0))+1) {
		return 0
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return 0
	}
	return parseIdx(b, size, add)
}

// scanPack calls found for each record header in the first size bytes of
// r that checks and whose record fits. A header that does not check, or
// whose record runs past size (a torn tail), is skipped by looking for the
// next recMagic after it. When the place after a record holds no header,
// that record may itself be cut short (a crash, then other appends after
// it): the search starts just after its start, so that the records its
// claimed length swallowed are found; its own CRC fails when it is read.
//
// A cut record followed by other appends whose lengths add up exactly to
// what it lacks looks whole from its header and the next one; at the end of
// the pack (the likeliest place) the last record is read and checked
// entirely, and elsewhere the records it swallowed are lost (a cache).
//
// It returns the end of the last record found (from when none), where a
// later scan of the pack grown since may start.
func scanPack(r io.ReaderAt, from, size int64, found func(sum [32]byte, off int64, n int)) (resume int64) {
	br := blockReader{r: r, size: size}
	last := int64(-1) // the start of the record just found, if any
	resume = from
	for off := from; off < size; {
		h := br.at(off, recHeader)
		if sum, n, ok := parseHeader(h); ok && off+int64(recordLen(n)) <= size {
			end := off + int64(recordLen(n))
			if end < size || wholeRecord(r, off, n, &sum) {
				found(sum, off, n)
				last = off
				off, resume = end, end
				continue
			}
			last = off
		}
		at := off + 1
		if last >= 0 {
			// Each search starts past the last record found, which only
			// moves forward: the scan ends.
			at, last = last+1, -1
		}
		next, ok := br.find(at)
		if !ok {
			return resume
		}
		off = next
	}
	return resume
}

// wholeRecord reads the record at off and checks it.
func wholeRecord(r io.ReaderAt, off int64, n int, sum *[32]byte) bool {
	b := make([]byte, recordLen(n))
	if _, err := r.ReadAt(b, off); err != nil {
		return false
	}
	_, ok := parseRecord(b, sum)
	return ok
}

// blockReader reads small pieces of a pack through a block buffer, so that
// headers of small records come many to a read, and a large record's header
// costs one small read.
type blockReader struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	base int64
}

const headerBlock = 8 << 10

// at returns the n bytes at off (fewer at the end of the pack).
func (b *blockReader) at(off int64, n int) []byte {
	if off >= b.base && off+int64(n) <= b.base+int64(len(b.buf)) {
		return b.buf[off-b.base : off-b.base+int64(n)]
	}
	if cap(b.buf) < headerBlock {
		b.buf = make([]byte, headerBlock)
	}
	b.buf = b.buf[:min(int64(headerBlock), b.size-off)]
	m, _ := b.r.ReadAt(b.buf, off)
	b.buf, b.base = b.buf[:m], off
	return b.buf[:min(n, m)]
}

// find returns the offset of the first recMagic at or after off.
func (b *blockReader) find(off int64) (int64, bool) {
	const chunk = 64 << 10
	buf := make([]byte, chunk+len(recMagic)-1)
	for off < b.size {
		m, _ := b.r.ReadAt(buf[:min(int64(len(buf)), b.size-off)], off)
		if m < len(recMagic) {
			return 0, false
		}
		if i := bytes.Index(buf[:m], []byte(recMagic)); i >= 0 {
			return off + int64(i), true
		}
		off += int64(m - len(recMagic) + 1)
	}
	return 0, false
}

// read returns the fingerprints of the content hashing to sum from the
// first of its records that checks.
func (px *packIndex) read(sum *[32]byte) ([]uint64, bool) {
	if fps, ok := px.written[*sum]; ok {
		return fps, true
	}
	for _, l := range px.at[*sum] {
		b := make([]byte, recordLen(l.n))
		if _, err := px.files[l.pack].ReadAt(b, l.off); err != nil {
			continue
		}
		if fps, ok := parseRecord(b, sum); ok {
			return fps, true
		}
	}
	return nil, false
}

func (px *packIndex) close() {
	for _, f := range px.files {
		f.Close()
	}
	px.files = nil
}

// sumOf decodes a hex SHA-256.
func sumOf(sha string) (sum [32]byte, ok bool) {
	if len(sha) != 64 {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(sha))
	return sum, err == nil
}
