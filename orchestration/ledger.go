package orchestration

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/internal/uuid"
)

// LedgerName is the ledger's file name in .orchestration/.
const LedgerName = "agent_trace.jsonl"

// ErrTornTail marks a last line without its newline: a write cut short by a
// crash, or one still in progress when the file was read.
var ErrTornTail = errors.New("ledger: torn last line")

var errLedgerClosed = errors.New("ledger: closed")

// Ledger appends records to an append-only JSON Lines file that many processes
// may share. Every append holds an exclusive lock on the file path+".lock",
// links the record to the line before it (Meta.Prev), and writes the whole
// line with one write on a file opened O_APPEND; it returns once an fsync
// that began after the write has succeeded (see AppendLine and
// ledgersync.go). A Ledger is safe for concurrent use.
type Ledger struct {
	// Shape is the shape records are written in; set it before the first
	// Append. Verification and the intent map read both shapes.
	Shape RecordShape

	path string
	mu   sync.Mutex // serializes writes and the file handle
	f    *os.File
	fi   os.FileInfo // f's identity
	gen  int         // counts the files f has been, so a sync knows which it covers
	lock heldLock    // the appenders' lock, path+".lock", kept open

	// last is the ledger as this process left it after its last append:
	// while the path shows exactly that file (device, inode, size, and
	// times in nanoseconds), no other process has appended, truncated or
	// replaced it, and the next record links to link without reading the
	// tail. Anything else reads the tail.
	last struct {
		ok   bool
		gen  int
		key  fsx.Stamp
		link string
	}
	share ledgerShare // group commit with other processes
	// tailBuf is the buffer appends read the ledger's tail into (under mu).
	tailBuf []byte

	// Group commit: the fsync runs outside mu and the file lock, and one
	// fsync covers every line written before it started, by this process
	// or any other, so concurrent appends share it.
	smu     sync.Mutex
	scond   *sync.Cond
	syncing bool
	synced  ledgerMark  // everything up to here is durable
	wrote   ledgerMark  // the end of the last line this process wrote
	wroteIn os.FileInfo // the file wrote is in

	// pending holds the lines whose write succeeded but whose fsync
	// failed, by record id: a retry of the same record syncs the line
	// already there instead of appending it again.
	pending map[string]ledgerPending
	retired []*os.File // replaced handles a sync may still be using
}

type ledgerMark struct {
	gen int
	end int64
	// The line ending at end, when this process wrote it: its length
	// (newline included) and its chain hash, for the sync mark.
	size int64
	sum  [32]byte
}

type ledgerPending struct {
	gen  int
	off  int64
	line []byte
}

// OpenLedger opens the ledger at path, creating it and its directory if
// needed. If the file does not end with a newline (a crash in the middle of a
// write), the bytes after the last newline are appended to path+".broken",
// one fragment per line, and the ledger is truncated to its last complete
// line, under the appenders' lock. A bad line anywhere else is left alone:
// VerifyChain reports it.
func OpenLedger(path string) (*Ledger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	f, err := ledgerOpenFile(path)
	if err != nil {
		return nil, err
	}
	// A ledger whose last line is whole needs no repair, so opening it takes
	// no lock (a hook answering a read never waits for appenders); a torn
	// tail, which may be an append in progress, is repaired under the lock,
	// and every append repairs under it again before it writes.
	if ledgerEndsWhole(f) {
		return newLedger(path, f)
	}
	lock, err := fsx.Acquire(path + ".lock")
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer lock.Release()
	if _, _, _, err := ledgerRepair(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return newLedger(path, f)
}

func newLedger(path string, f *os.File) (*Ledger, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: %w", err)
	}
	l := &Ledger{path: path, f: f, fi: fi, pending: map[string]ledgerPending{}}
	l.lock.path = path + ".lock"
	l.share.lock.path = path + ".sync.lock"
	l.scond = sync.NewCond(&l.smu)
	return l, nil
}

// ledgerEndsWhole reports whether f is empty or ends with a newline.
func ledgerEndsWhole(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if fi.Size() == 0 {
		return true
	}
	var b [1]byte
	n, err := f.ReadAt(b[:], fi.Size()-1)
	return n == 1 && err == nil && b[0] == '\n'
}

// Path is the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Append links rec to the current last line (setting rec.Meta.Prev, and
// rec.Meta if it is nil), and appends it durably as one line.
func (l *Ledger) Append(rec *Record) error {
	_, err := l.AppendLine(rec)
	return err
}

// AppendLine is Append, returning the bytes of the line written (without its
// newline), which UpdateIntentMap takes. It returns once an fsync that began
// after the line was written has succeeded: the line is written under the
// lock, and synced after the lock is let go, so that appends from other
// goroutines and processes proceed meanwhile and one fsync serves them all.
//
// If the fsync fails, the line stays written; calling AppendLine again with
// the same record (same id) syncs that line rather than appending a copy.
func (l *Ledger) AppendLine(rec *Record) ([]byte, error) {
	return l.AppendLineAlong(rec, nil)
}

// AppendLineAlong is AppendLine running along (when not nil) at the same
// time as the fsync that makes the line durable, once the line is written:
// the fsyncs a change still needs (its directory's) then share one round of
// the disk with the record's, where a journaling file system commits them
// together. along does not run when the line could not be written.
func (l *Ledger) AppendLineAlong(rec *Record, along func()) ([]byte, error) {
	line, h, mark, err := l.writeLine(rec)
	if err != nil {
		return nil, err
	}
	var done chan struct{}
	if along != nil {
		done = make(chan struct{})
		go func() {
			defer close(done)
			along()
		}()
	}
	err = l.syncThrough(h, mark)
	if done != nil {
		<-done
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: append: %w", err)
	}
	ledgerObserve("acked", h.f, mark.end)
	l.mu.Lock()
	delete(l.pending, rec.ID)
	l.mu.Unlock()
	return line, nil
}

// ledgerHandle is a ledger file and its identity.
type ledgerHandle struct {
	f  *os.File
	fi os.FileInfo
}

// writeLine writes rec's line under the locks, or finds it already written
// by an earlier attempt whose fsync failed, and says which file and offset a
// sync must cover.
func (l *Ledger) writeLine(rec *Record) ([]byte, ledgerHandle, ledgerMark, error) {
	// The line is marshalled before the lock is taken, with a stand-in for
	// the link, which the lock's holder then writes over: the lock, which
	// every appending process waits for, is held for the file's work only.
	pre, at := ledgerPremarshal(rec, l.shape())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil, ledgerHandle{}, ledgerMark{}, errLedgerClosed
	}
	if err := l.lock.lock(); err != nil {
		return nil, ledgerHandle{}, ledgerMark{}, fmt.Errorf("ledger: %w", err)
	}
	defer l.lock.unlock()
	pi, err := l.reopenIfReplaced()
	if err != nil {
		return nil, ledgerHandle{}, ledgerMark{}, err
	}
	h := ledgerHandle{l.f, l.fi}
	if p, ok := l.pending[rec.ID]; ok && rec.ID != "" {
		if p.gen == l.gen && ledgerHasLineAt(l.f, p.off, p.line) {
			mark := ledgerMark{gen: l.gen, end: p.off + int64(len(p.line)) + 1}
			return p.line, h, mark, nil
		}
		delete(l.pending, rec.ID) // gone (repaired, replaced): write it anew
	}
	var prev string
	var end int64
	if k := fsx.StampInfo(pi); k.Known() && l.last.ok && l.last.gen == l.gen && k == l.last.key {
		prev, end = l.last.link, k.Size()
	} else {
		l.last.ok = false
		last, ok, complete, err := ledgerRepairIn(l.path, l.f, &l.tailBuf)
		if err != nil {
			return nil, ledgerHandle{}, ledgerMark{}, err
		}
		if ok {
			prev = ledgerLineHash(last)
		}
		end = complete
	}
	l.smu.Lock()
	if l.wrote.gen == l.gen && end < l.wrote.end {
		// Lines this process wrote are gone (the file was cut short):
		// offsets no longer tell what an earlier sync covered.
		l.gen++
	}
	l.smu.Unlock()
	if rec.Meta == nil {
		rec.Meta = &Meta{}
	}
	rec.Meta.Prev = prev
	var buf []byte
	if at > 0 && len(prev) == ledgerLinkLen {
		copy(pre[at:], prev)
		buf = pre
	} else {
		line, err := MarshalShape(rec, l.Shape)
		if err != nil {
			return nil, ledgerHandle{}, ledgerMark{}, err
		}
		if bytes.IndexByte(line, '\n') >= 0 { // compact JSON never has one
			return nil, ledgerHandle{}, ledgerMark{}, errors.New("ledger: record marshals to more than one line")
		}
		buf = make([]byte, len(line)+1)
		copy(buf, line)
		buf[len(line)] = '\n'
	}
	line := buf[: len(buf)-1 : len(buf)-1]
	l.last.ok = false
	if _, err := l.f.Write(buf); err != nil {
		return nil, ledgerHandle{}, ledgerMark{}, fmt.Errorf("ledger: append: %w", err)
	}
	ledgerObserve("written", l.f, end+int64(len(buf)))
	mark := ledgerMark{gen: l.gen, end: end + int64(len(buf)), size: int64(len(buf)), sum: sha256.Sum256(line)}
	l.noteLast(mark.end, mark.sum)
	if rec.ID != "" {
		l.pending[rec.ID] = ledgerPending{gen: l.gen, off: end, line: line}
	}
	l.smu.Lock()
	if mark.gen > l.wrote.gen || mark.end > l.wrote.end {
		l.wrote, l.wroteIn = mark, h.fi
	}
	l.smu.Unlock()
	return line, h, mark, nil
}

// ledgerLinkLen is the length of a link to a line: "sha256:" and 64 hex
// digits.
const ledgerLinkLen = len(HashPrefix) + 2*sha256.Size

// shape is l.Shape, read under mu (it is set before the first append).
func (l *Ledger) shape() RecordShape {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Shape
}

// ledgerPremarshal marshals rec as a ledger line (its newline included)
// whose link is a stand-in: "sha256:" and 64 random hex digits, and returns
// the line and the offset of those 64+7 bytes in it, where the real link,
// of the same length and likewise written without escapes, goes. The
// stand-in is fresh for every line, so it occurs in the line exactly where
// the link is, and nowhere else whatever the record holds; a line where it
// occurs other than once, or a record that does not marshal, gives at 0,
// and the caller marshals under the lock as before (and reports the error).
// rec.Meta.Prev is left as it was.
func ledgerPremarshal(rec *Record, shape RecordShape) (line []byte, at int) {
	var r [sha256.Size]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, 0
	}
	stand := HashPrefix + hex.EncodeToString(r[:])
	var meta Meta
	if rec.Meta != nil {
		meta = *rec.Meta
	}
	meta.Prev = stand
	withStand := *rec
	withStand.Meta = &meta
	b, err := MarshalShape(&withStand, shape)
	if err != nil || bytes.IndexByte(b, '\n') >= 0 {
		return nil, 0
	}
	i := bytes.Index(b, []byte(stand))
	if i <= 0 || bytes.Count(b, []byte(stand)) != 1 || !bytes.HasSuffix(b[:i], []byte(`"prev":"`)) {
		return nil, 0
	}
	return append(b, '\n'), i
}

// LedgerPos is where a line ends in one ledger file: the file's device and
// inode and the offset just after the line's newline. The zero LedgerPos is
// unknown.
type LedgerPos struct {
	Dev, Ino uint64
	End      int64
}

// Known reports whether p names a position.
func (p LedgerPos) Known() bool { return p.End > 0 }

// Wrote is where the last line this Ledger appended ends (unknown before
// the first append, or where the file's identity is not known). Called
// after an append returned, it is at or after that append's line.
func (l *Ledger) Wrote() LedgerPos {
	l.smu.Lock()
	w, fi := l.wrote, l.wroteIn
	l.smu.Unlock()
	if fi == nil || w.end <= 0 {
		return LedgerPos{}
	}
	id := fsx.StampInfo(fi)
	if !id.Known() {
		return LedgerPos{}
	}
	dev, ino := id.Identity()
	return LedgerPos{Dev: dev, Ino: ino, End: w.end}
}

// noteLast remembers the ledger as this append left it, if the file is as
// long as the line just written says: then no other process wrote between
// the lock's check and this write.
func (l *Ledger) noteLast(end int64, sum [32]byte) {
	fi, err := l.f.Stat()
	if err != nil {
		return
	}
	k := fsx.StampInfo(fi)
	if !k.Known() || k.Size() != end {
		return
	}
	l.last.ok, l.last.gen, l.last.key, l.last.link = true, l.gen, k, HashPrefix+hex.EncodeToString(sum[:])
}

// syncThrough returns once the bytes of file generation mark.gen up to
// mark.end are durable: it waits for an fsync in flight and, unless that one
// already covered mark, runs one itself, covering every line written so far.
func (l *Ledger) syncThrough(h ledgerHandle, mark ledgerMark) error {
	l.smu.Lock()
	for {
		if l.synced.gen == mark.gen && l.synced.end >= mark.end {
			l.smu.Unlock()
			return nil
		}
		if !l.syncing {
			break
		}
		l.scond.Wait()
	}
	l.syncing = true
	target := l.wrote
	if target.gen != mark.gen || target.end < mark.end {
		target = mark
	}
	l.smu.Unlock()

	durable, err := l.share.sync(l.path, h, target)
	if durable > target.end {
		// Covered through a later line than target's: its size and
		// hash are not known here.
		target.end, target.size, target.sum = durable, 0, [32]byte{}
	}

	l.smu.Lock()
	l.syncing = false
	if err == nil && (target.gen > l.synced.gen || target.end > l.synced.end) {
		l.synced = target
	}
	l.scond.Broadcast()
	l.smu.Unlock()
	return err
}

// ledgerHasLineAt reports whether f holds line and its newline at off.
func ledgerHasLineAt(f *os.File, off int64, line []byte) bool {
	b := make([]byte, len(line)+1)
	if _, err := f.ReadAt(b, off); err != nil {
		return false
	}
	return bytes.Equal(b[:len(line)], line) && b[len(line)] == '\n'
}

// AppendAll appends records in order, each linked to the one before it, under
// one lock and with one fsync at the end: for importing many records, where an
// fsync per record would take minutes. The lines go out in writes of whole
// lines; a crash part way leaves a prefix of them (and perhaps a torn line,
// repaired on the next open). It returns how many were written.
func (l *Ledger) AppendAll(recs []*Record) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, errLedgerClosed
	}
	if err := l.lock.lock(); err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	defer l.lock.unlock()
	if _, err := l.reopenIfReplaced(); err != nil {
		return 0, err
	}
	l.last.ok = false
	last, ok, _, err := ledgerRepair(l.path, l.f)
	if err != nil {
		return 0, err
	}
	prev := ""
	if ok {
		prev = ledgerLineHash(last)
	}
	var buf []byte
	written, pending := 0, 0
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if _, err := l.f.Write(buf); err != nil {
			return fmt.Errorf("ledger: append: %w", err)
		}
		written += pending
		buf, pending = buf[:0], 0
		return nil
	}
	for _, rec := range recs {
		if rec.Meta == nil {
			rec.Meta = &Meta{}
		}
		rec.Meta.Prev = prev
		line, err := MarshalShape(rec, l.Shape)
		if err == nil && bytes.IndexByte(line, '\n') >= 0 {
			err = errors.New("ledger: record marshals to more than one line")
		}
		if err != nil {
			err = errors.Join(err, flush(), ledgerSync(l.f)) // keep what went before
			return written, err
		}
		buf = append(append(buf, line...), '\n')
		pending++
		prev = ledgerLineHash(line)
		if len(buf) >= 4<<20 {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	if err := flush(); err != nil {
		return written, err
	}
	if err := ledgerSync(l.f); err != nil {
		return written, fmt.Errorf("ledger: append: %w", err)
	}
	return written, nil
}

// Close closes the ledger file. Appends after Close fail.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	l.lock.drop()
	l.share.close()
	for _, f := range l.retired {
		f.Close()
	}
	l.retired = nil
	return err
}

// reopenIfReplaced follows the path when the file was replaced or removed
// since it was opened (a git checkout, a merge), so that records never go to
// an orphaned inode. It returns what the path names now, as lstat sees it (a
// symlink in the ledger's place is never followed: the open refuses it).
func (l *Ledger) reopenIfReplaced() (os.FileInfo, error) {
	pi, perr := os.Lstat(l.path)
	if perr == nil && os.SameFile(pi, l.fi) {
		return pi, nil
	}
	if perr != nil && !errors.Is(perr, fs.ErrNotExist) {
		return nil, fmt.Errorf("ledger: %w", perr)
	}
	f, err := ledgerOpenFile(l.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger: %w", err)
	}
	// A sync of the old file may still be running outside the lock: keep
	// it open until Close.
	l.retired = append(l.retired, l.f)
	l.f, l.fi = f, fi
	l.gen++
	l.last.ok = false
	return fi, nil
}

func ledgerOpenFile(path string) (*os.File, error) {
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|fsx.NoFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := fsx.SyncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, fmt.Errorf("ledger: %w", err)
		}
	}
	return f, nil
}

// ledgerRepair moves a torn tail of the ledger f (open on path) to
// path+".broken" and truncates it away; the caller holds the lock. It returns
// the last complete line, if there is one, and the offset where the complete
// lines end (where the next line goes).
func ledgerRepair(path string, f *os.File) (last []byte, ok bool, end int64, err error) {
	return ledgerRepairIn(path, f, nil)
}

// ledgerRepairIn is ledgerRepair reading the tail into *scratch (see
// ledgerTailRawIn): the line it returns lies there.
func ledgerRepairIn(path string, f *os.File, scratch *[]byte) (last []byte, ok bool, end int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false, 0, fmt.Errorf("ledger: %w", err)
	}
	raw, ok, complete, torn, err := ledgerTailRawIn(f, fi.Size(), scratch)
	if ok {
		last = ledgerTrimCR(raw[:len(raw)-1])
	}
	if err != nil {
		return nil, false, 0, err
	}
	if len(torn) == 0 {
		return last, ok, complete, nil
	}
	if err := ledgerSaveBroken(path+".broken", torn); err != nil {
		return nil, false, 0, err
	}
	// Truncate through a handle of its own: on Windows an O_APPEND handle
	// may not set the end of file.
	w, err := os.OpenFile(path, os.O_RDWR|fsx.NoFollow, 0)
	if err != nil {
		return nil, false, 0, fmt.Errorf("ledger: repair: %w", err)
	}
	defer w.Close()
	if err := w.Truncate(complete); err != nil {
		return nil, false, 0, fmt.Errorf("ledger: repair: %w", err)
	}
	if err := w.Sync(); err != nil {
		return nil, false, 0, fmt.Errorf("ledger: repair: %w", err)
	}
	return last, ok, complete, nil
}

func ledgerSaveBroken(path string, torn []byte) error {
	_, statErr := os.Lstat(path)
	b, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|fsx.NoFollow, 0o644)
	if err != nil {
		return fmt.Errorf("ledger: repair: %w", err)
	}
	frag := make([]byte, len(torn)+1)
	copy(frag, torn)
	frag[len(torn)] = '\n'
	_, err = b.Write(frag)
	if err == nil {
		err = b.Sync()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(statErr, fs.ErrNotExist) {
		err = fsx.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("ledger: repair: %w", err)
	}
	return nil
}

// ledgerTail reads r backwards from end, never further than needed, and
// returns the last complete line before end (without its newline and a
// carriage return before it) and whether there is one, the offset where
// complete lines end, and the bytes after it (a torn tail).
func ledgerTail(r io.ReaderAt, end int64) (last []byte, ok bool, complete int64, torn []byte, err error) {
	raw, ok, complete, torn, err := ledgerTailRaw(r, end)
	if ok {
		last = ledgerTrimCR(raw[:len(raw)-1])
	}
	return last, ok, complete, torn, err
}

// ledgerTailRaw is ledgerTail with the last complete line as it is in the
// file, its newline (and a carriage return before it) included.
func ledgerTailRaw(r io.ReaderAt, end int64) (last []byte, ok bool, complete int64, torn []byte, err error) {
	return ledgerTailRawIn(r, end, nil)
}

// ledgerScratchMax bounds the tail buffer a caller keeps between reads (a
// longer line is read into a buffer of its own).
const ledgerScratchMax = 64 << 10

// ledgerTailRawIn is ledgerTailRaw reading into *scratch when it is not nil
// and keeping the buffer there for the next call: an append that finds the
// ledger grown by another process reads its tail without allocating (fresh
// memory costs a page fault per 4 KiB in a process whose heap is growing).
// What it returns lies in *scratch: use it before the next call.
func ledgerTailRawIn(r io.ReaderAt, end int64, scratch *[]byte) (last []byte, ok bool, complete int64, torn []byte, err error) {
	var buf []byte // the bytes from start to end
	start, chunk := end, int64(8<<10)
	for start > 0 {
		n := min(chunk, start)
		start -= n
		total := int(end - start)
		var nb []byte
		if scratch != nil && cap(*scratch) >= total {
			nb = (*scratch)[:total]
		} else {
			nb = make([]byte, total)
			if scratch != nil && total <= ledgerScratchMax {
				*scratch = nb
			}
		}
		copy(nb[n:], buf) // buf may lie in nb: copy moves overlapping bytes right
		if _, err := r.ReadAt(nb[:n], start); err != nil {
			return nil, false, 0, nil, fmt.Errorf("ledger: read tail: %w", err)
		}
		buf = nb
		nl := bytes.LastIndexByte(buf, '\n')
		if nl < 0 {
			if chunk < 1<<20 {
				chunk *= 2
			}
			continue
		}
		prev := bytes.LastIndexByte(buf[:nl], '\n')
		if prev < 0 && start > 0 {
			if chunk < 1<<20 {
				chunk *= 2
			}
			continue
		}
		return buf[prev+1 : nl+1], true, start + int64(nl) + 1, buf[nl+1:], nil
	}
	return nil, false, 0, buf, nil
}

func ledgerTrimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// ledgerLineHash is the chain link naming a line: "sha256:" and the hex
// SHA-256 of its bytes without the newline.
func ledgerLineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return HashPrefix + hex.EncodeToString(sum[:])
}

func ledgerParseLink(p string) (sum [32]byte, ok bool) {
	h, found := strings.CutPrefix(p, HashPrefix)
	if !found || len(h) != 64 {
		return sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(h)); err != nil {
		return sum, false
	}
	return sum, true
}

// ledgerReaders keeps the 64 KiB readers of ledgerLines between uses: an
// intent map update reads a few lines, and a fresh buffer each time is
// fresh memory, a page fault per 4 KiB while the heap grows.
var ledgerReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// ledgerLines reads r line by line, lines of any length, calling fn with each
// line (without "\n" or "\r\n"; the slice is reused after fn returns), the
// number of bytes it took in r, and whether it ended with a newline (only the
// last one may not).
func ledgerLines(r io.Reader, fn func(raw []byte, size int, complete bool) error) error {
	br := ledgerReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil) // keeps no file
		ledgerReaders.Put(br)
	}()
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			long = append(long, chunk...)
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("ledger: read: %w", err)
		}
		if len(line) > 0 {
			size := len(line)
			complete := line[len(line)-1] == '\n'
			if complete {
				line = ledgerTrimCR(line[:len(line)-1])
			}
			if ferr := fn(line, size, complete); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil
		}
		long = nil
	}
}

// ScanLedger streams the ledger at path, calling fn for every line with its
// 1-based number, its bytes (without the newline; only valid until fn
// returns) and the record or the error parsing it. A last line without its
// newline is passed with rec nil and an error wrapping ErrTornTail. The first
// error fn returns stops the scan and is returned.
func ScanLedger(path string, fn func(lineNo int, raw []byte, rec *Record, err error) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	n := 0
	return ledgerLines(f, func(raw []byte, _ int, complete bool) error {
		n++
		if !complete {
			return fn(n, raw, nil, fmt.Errorf("line %d: %w", n, ErrTornTail))
		}
		rec, err := ReadLedgerLine(raw)
		return fn(n, raw, rec, err)
	})
}

// ReadLedgerLine parses one ledger line, with or without its newline.
func ReadLedgerLine(raw []byte) (*Record, error) {
	raw = bytes.TrimSuffix(raw, []byte{'\n'})
	raw = ledgerTrimCR(raw)
	if bytes.IndexByte(raw, '\n') >= 0 {
		return nil, errors.New("ledger: more than one line")
	}
	return ParseRecord(raw)
}

// ChainFault says what is wrong with a ledger line.
type ChainFault string

const (
	// ChainUnparsable: the line is not a record (edited, or damaged).
	ChainUnparsable ChainFault = "unparsable"
	// ChainUnlinked: the record has no dev.intentgate metadata, so no prev.
	ChainUnlinked ChainFault = "unlinked"
	// ChainBroken: prev names no line of the ledger. The line before was
	// edited, lines before this one were deleted, or this one was inserted.
	ChainBroken ChainFault = "broken"
	// ChainReordered: prev names a line that comes later in the file.
	ChainReordered ChainFault = "reordered"
	// ChainDuplicate: the record's id is that of an earlier line (a copy).
	ChainDuplicate ChainFault = "duplicate"
)

// ChainProblem is one bad line.
type ChainProblem struct {
	Line   int // 1-based
	Fault  ChainFault
	Detail string
}

func (p ChainProblem) String() string {
	return fmt.Sprintf("line %d: %s: %s", p.Line, p.Fault, p.Detail)
}

// ChainFork is a record whose prev names an earlier line other than the one
// just before it, which is what git's union merge of two branches of the
// ledger produces; a Parent of 0 means the record starts a new chain (a
// ledger created on two branches).
type ChainFork struct {
	Line   int
	Parent int
}

// ChainReport is what VerifyChain found.
type ChainReport struct {
	Lines   int // complete lines
	Records int // lines that parsed
	// FirstBad is the 1-based line of the first bad record, 0 if there is
	// none; Reason says why. Problems lists every bad line in order.
	FirstBad int
	Reason   string
	Problems []ChainProblem
	// Forks are allowed: each names an earlier line. Heads are the lines
	// no later record names, the last line aside: the ends of merged
	// branches, or lines inserted with a valid prev. Auditors look at both.
	Forks []ChainFork
	Heads []int
	// TornTail is the length of a last line without its newline (a crash,
	// or an append in progress); OpenLedger repairs it.
	TornTail int
}

// OK reports whether every line is a record linked to an earlier line.
// Forks are allowed; a torn tail is reported apart.
func (r *ChainReport) OK() bool { return r.FirstBad == 0 }

func (r *ChainReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines, %d records", r.Lines, r.Records)
	if r.FirstBad != 0 {
		fmt.Fprintf(&b, "; first bad line %d: %s", r.FirstBad, r.Reason)
	}
	if len(r.Forks) > 0 {
		fmt.Fprintf(&b, "; %d forks", len(r.Forks))
	}
	if r.TornTail > 0 {
		fmt.Fprintf(&b, "; torn tail of %d bytes", r.TornTail)
	}
	return b.String()
}

// VerifyChain reads the ledger at path and checks that every line is a record
// whose prev names the line before it or, after a union merge, some earlier
// line (reported as a fork). It reads the file once, keeping 32 bytes per
// line. Editing, deleting, inserting or reordering lines shows as a problem at
// the first record whose link no longer holds; only the last line's edit or
// removal is beyond a hash chain's reach.
func VerifyChain(path string) (*ChainReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	v := NewChainVerifier()
	err = ledgerLines(f, func(raw []byte, _ int, complete bool) error {
		if !complete {
			v.Torn(len(raw))
			return nil
		}
		rec, err := ParseRecord(raw)
		v.Add(sha256.Sum256(raw), rec, err)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v.Report(), nil
}

// LineLink is the chain link naming a ledger line: "sha256:" and the hex
// SHA-256 of its bytes without the newline, as the next record's prev holds it.
func LineLink(line []byte) string { return ledgerLineHash(line) }

// ChainVerifier is VerifyChain one line at a time, for a caller that reads
// (and parses, perhaps in parallel) the ledger itself: Add every complete line
// in order, then Report.
type ChainVerifier struct {
	rep      *ChainReport
	lineOf   *firstSeen[[32]byte] // line hash -> first line with it
	idOf     *firstSeen[uuid.UUID]
	named    []bool // named[i]: line i+1 is some record's prev
	waiting  []chainPending
	prevHash [32]byte
}

type chainPending struct {
	line int
	prev [32]byte
}

// NewChainVerifier returns a verifier that has seen no line.
func NewChainVerifier() *ChainVerifier {
	return &ChainVerifier{rep: &ChainReport{},
		lineOf: newFirstSeen(func(h [32]byte) uint64 { return binary.LittleEndian.Uint64(h[:8]) }),
		idOf: newFirstSeen(func(id uuid.UUID) uint64 {
			return binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:])
		})}
}

// LineSum is the hash of line n (1-based) as Add took it.
func (v *ChainVerifier) LineSum(n int) [32]byte { return v.lineOf.keys[n-1] }

// firstSeen maps keys to the first line they were seen at in about a third
// of the memory of a map keyed by them (a million-line ledger is verified in
// bounded memory): a map from a 64-bit fold of the key to the line, every
// line's key kept once in a slice to confirm a hit, and an exact map for the
// rare keys whose fold another key has.
type firstSeen[K comparable] struct {
	fold  func(K) uint64
	short map[uint64]int32
	keys  []K // keys[line-1]; the zero K for a line without one
	more  map[K]int
}

func newFirstSeen[K comparable](fold func(K) uint64) *firstSeen[K] {
	return &firstSeen[K]{fold: fold, short: map[uint64]int32{}, more: map[K]int{}}
}

func (f *firstSeen[K]) get(k K) (int, bool) {
	if l, ok := f.short[f.fold(k)]; ok && f.keys[l-1] == k {
		return int(l), true
	}
	l, ok := f.more[k]
	return l, ok
}

// note keeps k as line's key, and as the first line with k unless k was
// seen before; lines come in order.
func (f *firstSeen[K]) note(k K, line int) {
	var zero K
	for len(f.keys) < line {
		f.keys = append(f.keys, zero)
	}
	_, seen := f.get(k)
	f.keys[line-1] = k
	if seen {
		return
	}
	if _, taken := f.short[f.fold(k)]; taken {
		f.more[k] = line
		return
	}
	f.short[f.fold(k)] = int32(line)
}

// Torn notes a last line of n bytes without its newline.
func (v *ChainVerifier) Torn(n int) { v.rep.TornTail = n }

// Add takes the next complete line: the SHA-256 of its bytes (without the
// newline) and the record ParseRecord made of it, or the error it gave. A
// caller that rejects a record for its own reasons (a schema) passes that
// error, and the line counts as unparsable.
func (v *ChainVerifier) Add(sum [32]byte, rec *Record, parseErr error) {
	rep := v.rep
	rep.Lines++
	i := rep.Lines
	h := sum
	v.named = append(v.named, false)
	defer func() {
		v.lineOf.note(h, i)
		v.prevHash = h
	}()
	if parseErr != nil || rec == nil {
		if parseErr == nil {
			parseErr = errors.New("no record")
		}
		v.problem(i, ChainUnparsable, "%v", parseErr)
		return
	}
	rep.Records++
	// ParseRecord accepts only UUIDs; 16 bytes a line keep this map small.
	if id, err := uuid.Parse(rec.ID); err == nil {
		if j, dup := v.idOf.get(id); dup {
			v.problem(i, ChainDuplicate, "record %s is also line %d", rec.ID, j)
		} else {
			v.idOf.note(id, i)
		}
	}
	if rec.Meta == nil {
		v.problem(i, ChainUnlinked, "no %s metadata", MetaKey)
		return
	}
	p := rec.Meta.Prev
	if p == "" {
		if i > 1 {
			rep.Forks = append(rep.Forks, ChainFork{Line: i, Parent: 0})
		}
		return
	}
	want, ok := ledgerParseLink(p)
	if !ok {
		v.problem(i, ChainBroken, "prev %q is not a sha256 link", p)
		return
	}
	switch j, seen := v.lineOf.get(want); {
	case i > 1 && want == v.prevHash:
		v.named[i-2] = true
	case seen:
		v.named[j-1] = true
		rep.Forks = append(rep.Forks, ChainFork{Line: i, Parent: j})
	default:
		v.waiting = append(v.waiting, chainPending{line: i, prev: want})
	}
}

func (v *ChainVerifier) problem(line int, fault ChainFault, format string, args ...any) {
	v.rep.Problems = append(v.rep.Problems, ChainProblem{Line: line, Fault: fault, Detail: fmt.Sprintf(format, args...)})
}

// Report finishes the verification. Call it once, after the last Add.
func (v *ChainVerifier) Report() *ChainReport {
	rep := v.rep
	for _, w := range v.waiting {
		j, later := v.lineOf.get(w.prev)
		switch {
		case later:
			v.named[j-1] = true
			v.problem(w.line, ChainReordered, "prev names line %d, which comes after it", j)
		case w.line == 1:
			v.problem(w.line, ChainBroken, "the first record's prev is not empty: lines before it were removed")
		default:
			v.problem(w.line, ChainBroken, "prev names no line of the ledger: line %d was edited or lines after it deleted, or line %d was inserted", w.line-1, w.line)
		}
	}
	v.waiting = nil
	sort.SliceStable(rep.Problems, func(a, b int) bool { return rep.Problems[a].Line < rep.Problems[b].Line })
	if len(rep.Problems) > 0 {
		rep.FirstBad = rep.Problems[0].Line
		rep.Reason = string(rep.Problems[0].Fault) + ": " + rep.Problems[0].Detail
	}
	for i := 0; i+1 < len(v.named); i++ {
		if !v.named[i] {
			rep.Heads = append(rep.Heads, i+1)
		}
	}
	return rep
}
