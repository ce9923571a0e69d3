package orchestration

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Intent map updates shared by the processes of one workspace.
//
// Every process that serves sessions batches its map updates, and every
// update folds all the records appended since the summary it starts from,
// whoever appended them. A process whose summary in memory was left behind
// by the other processes' updates reads and parses their records again, so
// with P processes writing, each record was parsed P times.
//
// So every update leaves a mark in intent_map.lock, under the workspace
// key's MAC: "intent_map.md showed the ledger (this device and inode)
// through the line with this chain hash and length that ends at this
// offset, rendered with intents of this digest, at this time, by this
// process; the file it left has this stamp". A process reads the mark
// before an update of its own (IntentMapShown), and:
//   - when the mark covers the end of its last record, the intents are the
//     ones it has, and intent_map.md is still the file the mark's update left,
//     the map already shows everything it would fold: nothing to do;
//   - when its batch is due within a batch's time of another process's
//     update, it holds the batch until that process's next update is due
//     (hooks.IntentMap), which then shows its records too.
//
// While sessions write steadily, one process (the last that updated) does
// the updates and the others only read the mark. A process that is closing
// never holds its batch: it is shown by then, or it updates.
//
// The mark is derived and written without fsync, after the map it
// describes. Whatever does not hold (no mark, a torn one, another
// workspace's, a ledger replaced or rewritten so that the line is no longer
// where the mark says, a map edited or replaced since) means an update of
// one's own. An agent's shell that could forge the MAC (it would need the
// workspace key, kept outside the workspace) could make processes skip
// updates: intent_map.md would lag the ledger, which stays the record.

var intentMapMarkMagic = []byte("igimap1\n")

// intentMapMarkSize: magic, the ledger line (device, inode, end, length,
// chain hash), the time, the writer's token, the intents' digest, the map's
// stamp, and the MAC.
const intentMapMarkSize = 8 + 4*8 + 32 + 8 + 8 + 32 + fsx.StampSize + 32

type intentMapMark struct {
	line    ledgerSyncMark // the last line the map shows
	at      int64          // Unix nanoseconds
	by      uint64         // the token of the process that updated
	intents [32]byte       // intentMapIntentsDigest of the intents rendered
	md      [fsx.StampSize]byte
}

func (m *intentMapMark) encode(key []byte) []byte {
	b := make([]byte, 0, intentMapMarkSize)
	b = append(b, intentMapMarkMagic...)
	b = binary.LittleEndian.AppendUint64(b, m.line.dev)
	b = binary.LittleEndian.AppendUint64(b, m.line.ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.line.end))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.line.size))
	b = append(b, m.line.sum[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.at))
	b = binary.LittleEndian.AppendUint64(b, m.by)
	b = append(b, m.intents[:]...)
	b = append(b, m.md[:]...)
	return append(b, intentMapMarkMAC(key, b)...)
}

func intentMapMarkMAC(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("intentgate intent map mark\x00"))
	h.Write(body)
	return h.Sum(nil)
}

// parseIntentMapMark reads a mark; ok is false for anything but a mark
// whose MAC holds under key and whose numbers are sane.
func parseIntentMapMark(b, key []byte) (m intentMapMark, ok bool) {
	if len(key) == 0 || len(b) < intentMapMarkSize || !bytes.Equal(b[:8], intentMapMarkMagic) {
		return m, false
	}
	body := b[:intentMapMarkSize-32]
	if !hmac.Equal(b[intentMapMarkSize-32:intentMapMarkSize], intentMapMarkMAC(key, body)) {
		return m, false
	}
	r := body[8:]
	u64 := func() uint64 {
		v := binary.LittleEndian.Uint64(r)
		r = r[8:]
		return v
	}
	m.line.dev, m.line.ino = u64(), u64()
	end, size := u64(), u64()
	r = r[copy(m.line.sum[:], r):]
	m.at, m.by = int64(u64()), u64()
	r = r[copy(m.intents[:], r):]
	copy(m.md[:], r)
	if size == 0 || size > ledgerMarkMaxLine || end > 1<<62 || size > end {
		return m, false
	}
	m.line.end, m.line.size = int64(end), int64(size)
	return m, true
}

// intentMapToken tells this process's marks from other processes'.
var intentMapToken = sync.OnceValue(func() uint64 { return rand.Uint64() | 1 })

// intentMapIntentsDigest is a digest of everything intent_map.md shows of
// the declared intents: the map of no records rendered with them.
func intentMapIntentsDigest(intents []Intent) [32]byte {
	return sha256.Sum256(RenderIntentMap(intents, nil))
}

// IntentMapShown is what the last update of a workspace's intent map, by
// whichever process, says the map showed (see the comment at the top of
// this file). The zero IntentMapShown knows nothing.
type IntentMapShown struct {
	// Valid: a mark under the workspace key whose line the ledger still
	// holds where the mark says.
	Valid bool
	// Through is the end of the last ledger line the map showed.
	Through LedgerPos
	// At is when the map was written; Mine, whether by this process.
	At   time.Time
	Mine bool
	// Current: intent_map.md is still the file that update left, and it
	// rendered the intents ReadIntentMapShown was given.
	Current bool
	// Whole: nothing was appended to the ledger since.
	Whole bool
}

// Covers reports whether the map showed the ledger through p (the end of a
// record this process appended) when it was written.
func (s IntentMapShown) Covers(p LedgerPos) bool {
	return s.Valid && p.Known() && s.Through.Dev == p.Dev && s.Through.Ino == p.Ino && s.Through.End >= p.End
}

// ReadIntentMapShown reads the mark the last update of the intent map of
// orchDir left, without taking the lock: a mark read while being written
// fails its MAC, and one written just after it was read only shows more.
func ReadIntentMapShown(orchDir string, intents []Intent) IntentMapShown {
	lf, err := os.OpenFile(filepath.Join(orchDir, IntentMapLockName), os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return IntentMapShown{}
	}
	defer lf.Close()
	return readIntentMapShown(lf, orchDir, intents)
}

// readIntentMapShown reads the mark in the lock file lf.
func readIntentMapShown(lf *os.File, orchDir string, intents []Intent) IntentMapShown {
	key, err := cachedWorkspaceKey(filepath.Dir(orchDir))
	if err != nil {
		return IntentMapShown{}
	}
	var buf [intentMapMarkSize]byte
	n, _ := lf.ReadAt(buf[:], 0)
	m, ok := parseIntentMapMark(buf[:n], key)
	if !ok {
		return IntentMapShown{}
	}
	f, err := os.OpenFile(filepath.Join(orchDir, LedgerName), os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return IntentMapShown{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return IntentMapShown{}
	}
	id := fsx.StampInfo(fi)
	if dev, ino := id.Identity(); !id.Known() || dev != m.line.dev || ino != m.line.ino || !m.line.holds(f) {
		return IntentMapShown{}
	}
	s := IntentMapShown{Valid: true, Through: LedgerPos{Dev: m.line.dev, Ino: m.line.ino, End: m.line.end},
		At: time.Unix(0, m.at), Mine: m.by == intentMapToken(), Whole: fi.Size() == m.line.end}
	if md, err := fsx.StampOf(filepath.Join(orchDir, IntentMapName), false); err == nil && md.Known() {
		var cur [fsx.StampSize]byte
		md.AppendBinary(cur[:0])
		s.Current = cur == m.md && intentMapIntentsDigest(intents) == m.intents
	}
	return s
}

// writeIntentMapMark leaves the mark of an update that showed the ledger
// ledger (open, with the identity fi) through the summary's last line, with
// intents, in the held lock file lock; without what a mark needs it clears
// the mark, so that none describes a map this update replaced.
func writeIntentMapMark(lock *os.File, key []byte, ledger *os.File, fi os.FileInfo, sum *IntentMapSummary, intents []Intent, mdPath string) {
	m, ok := intentMapMark{at: time.Now().UnixNano(), by: intentMapToken(), intents: intentMapIntentsDigest(intents)}, false
	if len(key) > 0 && ledger != nil && fi != nil && sum.Offset > 0 && sum.lastSize > 0 {
		id := fsx.StampInfo(fi)
		sumLine, linkOK := ledgerParseLink(sum.LastLine)
		md, err := fsx.StampOf(mdPath, false)
		if id.Known() && linkOK && err == nil && md.Known() {
			m.line.dev, m.line.ino = id.Identity()
			m.line.end, m.line.size, m.line.sum = sum.Offset, sum.lastSize, sumLine
			md.AppendBinary(m.md[:0])
			ok = true
		}
	}
	if !ok {
		lock.Truncate(0)
		return
	}
	lock.WriteAt(m.encode(key), 0) // if lost, processes update for themselves
}
