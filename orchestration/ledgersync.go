package orchestration

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Group commit across processes.
//
// An append writes its line under the ledger's lock and fsyncs after letting
// the lock go. One fsync makes durable every byte the file held when it
// began, whoever wrote it, so processes appending at the same time need not
// each pay for one. A process about to fsync takes the sync lock first
// (LedgerName+".sync.lock"; appends never wait for it, only fsyncs do) and
// reads the mark the last fsync left in that file: "the ledger with this
// device and inode is durable through offset End, where a line Len bytes
// long (its newline included) with the chain hash Sum ends", authenticated
// with the workspace's key. If
// End covers its own line, it returns without an fsync. Otherwise it notes
// the last complete line the file holds, fsyncs, and only then writes the
// mark for that line.
//
// Why skipping is safe: the ledger grows only at its end, one whole line per
// write under the lock, so the line that ends at End was written after every
// line before it. The process that left the mark had read that line before
// its fsync began, so every line ending at or before End (the skipping
// process's own included) was written before an fsync began, and that fsync
// had returned before the mark was written.
//
// A mark is believed only when it still describes the file: the same device
// and inode as the file this process wrote its line to, and the bytes that
// end at End there now are a whole line with the chain hash Sum, which names one
// record (records carry a unique id and the link to the line before). A
// ledger replaced, truncated, or rewritten with other lines since (git, an
// editor, a restore) no longer has that line there. A mark that is torn,
// garbage, from another workspace, or written by anyone without the key
// fails its MAC. Whatever is not believed is ignored: the process fsyncs for
// itself. Repairing a torn tail cuts only after the last complete line, never
// below a mark. The mark file is written without fsync: after a crash it
// holds an older mark or a torn one; an older one still names durable bytes.
//
// An agent whose shell can read the workspace key (outside the workspace)
// and write .orchestration/ could forge a mark; it could as well rewrite the
// ledger itself, which the chain and the checkpoints pushed elsewhere are
// for.

// ledgerShare is one Ledger's side of the group commit.
type ledgerShare struct {
	mu     sync.Mutex // one sync at a time (syncThrough ensures it), or close
	once   sync.Once
	key    []byte   // nil: no sharing, every sync is an fsync of its own
	lock   heldLock // the sync lock, which holds the mark
	closed bool
	buf    []byte // what sync reads the ledger into (under mu)
}

// ledgerMarkSize is the mark's size on disk: "igsync1\n", device, inode,
// end, line length (little-endian 64-bit each), the line's chain hash, and
// the HMAC-SHA256 of all that under the workspace key.
const ledgerMarkSize = 8 + 4*8 + 32 + 32

var ledgerMarkMagic = []byte("igsync1\n")

type ledgerSyncMark struct {
	dev, ino  uint64
	end, size int64    // size: the length of the line ending at end, newline included
	sum       [32]byte // the line's chain hash (SHA-256 without the line end)
}

func (m *ledgerSyncMark) encode(key []byte) []byte {
	b := make([]byte, 0, ledgerMarkSize)
	b = append(b, ledgerMarkMagic...)
	b = binary.LittleEndian.AppendUint64(b, m.dev)
	b = binary.LittleEndian.AppendUint64(b, m.ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.end))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.size))
	b = append(b, m.sum[:]...)
	return append(b, ledgerMarkMAC(key, b)...)
}

func ledgerMarkMAC(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("intentgate ledger sync mark\x00"))
	h.Write(body)
	return h.Sum(nil)
}

// parseLedgerSyncMark reads a mark; ok is false for anything but a mark
// whose MAC holds under key and whose numbers are sane.
func parseLedgerSyncMark(b, key []byte) (m ledgerSyncMark, ok bool) {
	if len(key) == 0 || len(b) < ledgerMarkSize || !bytes.Equal(b[:8], ledgerMarkMagic) {
		return m, false
	}
	body := b[:ledgerMarkSize-32]
	if !hmac.Equal(b[ledgerMarkSize-32:ledgerMarkSize], ledgerMarkMAC(key, body)) {
		return m, false
	}
	m.dev = binary.LittleEndian.Uint64(body[8:])
	m.ino = binary.LittleEndian.Uint64(body[16:])
	end := binary.LittleEndian.Uint64(body[24:])
	size := binary.LittleEndian.Uint64(body[32:])
	copy(m.sum[:], body[40:72])
	if size == 0 || size > ledgerMarkMaxLine || end > 1<<62 || size > end {
		return m, false
	}
	m.end, m.size = int64(end), int64(size)
	return m, true
}

// ledgerMarkMaxLine bounds the line a mark names (and so what checking it
// reads); a longer last line leaves no mark.
const ledgerMarkMaxLine = 4 << 20

// holds reports whether f still has, ending at m.end, a whole line with
// m.sum: the line the mark's writer saw before its fsync.
func (m *ledgerSyncMark) holds(f *os.File) bool {
	return m.holdsIn(f, nil)
}

// holdsIn is holds reading into *scratch when it is not nil (and keeping a
// buffer of at most ledgerScratchMax there).
func (m *ledgerSyncMark) holdsIn(f *os.File, scratch *[]byte) bool {
	if m.size <= 0 || m.size > m.end || m.size > ledgerMarkMaxLine {
		return false
	}
	start := m.end - m.size
	from := max(start-1, 0) // the newline before the line, if any
	var b []byte
	if n := int(m.end - from); scratch != nil && cap(*scratch) >= n {
		b = (*scratch)[:n]
	} else {
		b = make([]byte, n)
		if scratch != nil && n <= ledgerScratchMax {
			*scratch = b
		}
	}
	if n, _ := f.ReadAt(b, from); n != len(b) {
		return false
	}
	if start > 0 {
		if b[0] != '\n' {
			return false
		}
		b = b[1:]
	}
	if b[len(b)-1] != '\n' || bytes.IndexByte(b[:len(b)-1], '\n') >= 0 {
		return false
	}
	return sha256.Sum256(ledgerTrimCR(b[:len(b)-1])) == m.sum
}

// sync makes the ledger file h durable through need at least, sharing the
// fsync with other processes where a mark allows, and says through which
// offset h is known durable.
func (s *ledgerShare) sync(ledgerPath string, h ledgerHandle, target ledgerMark) (int64, error) {
	need := target.end
	id := fsx.StampInfo(h.fi)
	if !id.Known() {
		return need, ledgerSync(h.f)
	}
	dev, ino := id.Identity()
	s.once.Do(func() {
		// The key of the workspace the ledger is in (ws/.orchestration/
		// agent_trace.jsonl). Without one, nothing is shared.
		if k, err := cachedWorkspaceKey(filepath.Dir(filepath.Dir(ledgerPath))); err == nil && len(k) > 0 {
			s.key = k
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil || s.closed {
		return need, ledgerSync(h.f)
	}
	if s.lock.lock() != nil {
		return need, ledgerSync(h.f) // no lock file to share through
	}
	defer s.lock.unlock()
	var buf [ledgerMarkSize]byte
	n, _ := s.lock.f.ReadAt(buf[:], 0)
	old, ok := parseLedgerSyncMark(buf[:n], s.key)
	if ok && old.dev == dev && old.ino == ino && old.end >= need && old.holdsIn(h.f, &s.buf) {
		ledgerObserve("covered", h.f, old.end)
		return old.end, nil
	}
	// The mark this fsync will leave: the last complete line the file holds
	// before it begins; when nothing followed this process's last line, the
	// line is known without reading it.
	next, nextOK := ledgerSyncMark{dev: dev, ino: ino}, false
	if fi, err := h.f.Stat(); err == nil {
		if fi.Size() == target.end && target.size > 0 {
			next.end, next.size, next.sum, nextOK = target.end, target.size, target.sum, true
		} else if raw, ok, complete, _, err := ledgerTailRawIn(h.f, fi.Size(), &s.buf); err == nil && ok && complete >= need && len(raw) <= ledgerMarkMaxLine {
			next.end, next.size, next.sum, nextOK = complete, int64(len(raw)), sha256.Sum256(ledgerTrimCR(raw[:len(raw)-1])), true
		}
	}
	if err := ledgerSync(h.f); err != nil {
		return 0, err
	}
	if !nextOK {
		return need, nil
	}
	// Written only now that the fsync returned. A newer mark of the same
	// file is never there to keep: this one covers the whole file.
	s.lock.f.WriteAt(next.encode(s.key), 0) // if lost, others fsync for themselves
	return next.end, nil
}

func (s *ledgerShare) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.lock.drop()
}
