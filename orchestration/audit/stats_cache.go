package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// The stats cache is the count of a prefix of the ledger, kept beside the
// index (IndexDirName/stats.bin) so that `trace stats` reads only the lines
// appended since. Like the index it is derived data: written by atomic
// replace without fsync, rebuilt when missing, damaged or out of date, and
// never trusted over the ledger:
//
//   - it is used only when the ledger still has, where the counted prefix
//     ends, the same last 64 KiB (a ledger truncated, or rewritten at its
//     end, is counted again from the start);
//   - it is authenticated with the workspace's key (orchestration.WorkspaceKey,
//     kept outside the workspace), so a cache written by anything but
//     intentgate, or for another ledger, is ignored and the ledger counted
//     in full.
//
// What it does not notice is a ledger rewritten before its last 64 KiB with
// the same length and the same end: that breaks the chain, which `trace
// verify` reports.
const (
	statsCacheName  = "stats.bin"
	statsCacheMagic = "IGSTAT01"
	statsMACLen     = 64 // hex HMAC-SHA256
	statsTailWindow = 64 << 10
)

// statsKey says which prefix of the ledger a cached count covers.
type statsKey struct {
	end  int64    // bytes: the prefix ends with a newline there
	tail [32]byte // SHA-256 of the prefix's last statsTailWindow bytes
}

// tailOf reads the key of the ledger's prefix that ends at end.
func tailOf(f io.ReaderAt, end int64) (statsKey, bool) {
	start := max(end-statsTailWindow, 0)
	buf := make([]byte, end-start)
	if _, err := f.ReadAt(buf, start); err != nil || len(buf) == 0 || buf[len(buf)-1] != '\n' {
		return statsKey{}, false
	}
	return statsKey{end: end, tail: sha256.Sum256(buf)}, true
}

// statsCacheMAC authenticates a cache body for the ledger at abs.
func statsCacheMAC(key []byte, abs string, body []byte) string {
	return orchestration.MAC(key, []byte("intentgate stats cache 1"), []byte(abs), body)
}

// countStats counts the ledger with the cache: from the cached prefix when
// it still holds, from the start otherwise, then keeps the new count. how
// says which: "full", "cached" (nothing appended) or "extended". The cache
// is a shortcut only: any trouble with it means a full count. chunk is the
// bytes per chunk read (0: the default; tests cut smaller).
func countStats(ws, ledger string, chunk int, progress func(read, total int64)) (s *Stats, how string, err error) {
	abs, err := filepath.Abs(ledger)
	if err != nil {
		return nil, "", err
	}
	cachePath := filepath.Join(indexDir(ledger), statsCacheName)
	mac, _ := orchestration.WorkspaceKey(ws) // none: no cache
	st, from := (*statState)(nil), int64(0)
	size := int64(-1)
	if f, err := os.Open(ledger); err == nil {
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
		if mac != nil {
			st, from = loadStatsCache(cachePath, mac, abs, f, size)
		}
		f.Close()
	}
	how = "extended"
	if st == nil {
		st, from, how = newStatState(), 0, "full"
	}
	var pr func(int64)
	if progress != nil {
		pr = func(n int64) { progress(n, size-from) }
	}
	end, n, err := st.count(ledger, from, chunk, pr)
	if err != nil {
		return nil, "", err
	}
	if how == "extended" && n == 0 {
		how = "cached"
	}
	if mac != nil && end > 0 && (how == "full" || n > 0) {
		saveStatsCache(cachePath, mac, abs, ledger, end, st) // best effort
	}
	return st.stats(), how, nil
}

// loadStatsCache returns the cached state and where it ends, when the cache
// is intentgate's, for this ledger, and the ledger still holds its prefix.
func loadStatsCache(path string, key []byte, abs string, ledger io.ReaderAt, size int64) (*statState, int64) {
	b, err := readStatsCache(path)
	if err != nil || len(b) < len(statsCacheMagic)+statsMACLen || string(b[:len(statsCacheMagic)]) != statsCacheMagic {
		return nil, 0
	}
	mac, body := string(b[len(statsCacheMagic):len(statsCacheMagic)+statsMACLen]), b[len(statsCacheMagic)+statsMACLen:]
	if !orchestration.MACEqual(mac, statsCacheMAC(key, abs, body)) {
		return nil, 0
	}
	k, st, err := decodeStatsCache(body)
	if err != nil || k.end > size {
		return nil, 0
	}
	if now, ok := tailOf(ledger, k.end); !ok || now != k {
		return nil, 0
	}
	return st, k.end
}

// statsCacheMax bounds the cache read: a count of any real ledger is far
// smaller (187 KB for 1M records over 5,000 files).
const statsCacheMax = 256 << 20

// readStatsCache reads the cache file if it is a regular file (not a
// symlink to a device or a pipe) of at most statsCacheMax bytes.
func readStatsCache(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > statsCacheMax {
		return nil, errStatsCache
	}
	return io.ReadAll(io.LimitReader(f, statsCacheMax))
}

func saveStatsCache(path string, key []byte, abs, ledger string, end int64, st *statState) {
	f, err := os.Open(ledger)
	if err != nil {
		return
	}
	k, ok := tailOf(f, end)
	f.Close()
	if !ok {
		return
	}
	dir := filepath.Dir(path)
	// Like the index: never write through a symlink an agent put in
	// .orchestration.
	if orchestration.CheckIntact(filepath.Dir(dir), filepath.Base(dir)) != nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	body := encodeStatsCache(k, st)
	out := make([]byte, 0, len(statsCacheMagic)+statsMACLen+len(body))
	out = append(append(append(out, statsCacheMagic...), statsCacheMAC(key, abs, body)...), body...)
	snap.WriteAtomic(path, out)
}

// The body: uvarints (zigzag varints for lines added), strings as a length
// and bytes.
//
//	end tail[32] lines records unparsable
//	npaths (path)*
//	3 x ( nrows ( key records changes violations denials linesAdded
//	              ncodes (code count)* nfiles (path number delta)* )* )
//
// Rows are sorted by key, codes by code, path numbers ascending (each delta
// after the first at least 1), so a state has one encoding.
func encodeStatsCache(k statsKey, s *statState) []byte {
	b := binary.AppendUvarint(nil, uint64(k.end))
	b = append(b, k.tail[:]...)
	u := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	str := func(v string) { u(len(v)); b = append(b, v...) }
	u(s.lines)
	u(s.records)
	u(s.unpars)
	u(len(s.paths))
	for _, p := range s.paths {
		str(p)
	}
	for _, t := range s.tabs {
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		u(len(keys))
		for _, key := range keys {
			r := t[key]
			str(key)
			u(r.records)
			u(r.changes)
			u(r.violations)
			u(r.denials)
			b = binary.AppendVarint(b, int64(r.linesAdded))
			codes := make([]string, 0, len(r.codes))
			for c := range r.codes {
				codes = append(codes, c)
			}
			slices.Sort(codes)
			u(len(codes))
			for _, c := range codes {
				str(c)
				u(r.codes[c])
			}
			nf := 0
			for _, w := range r.files {
				nf += bits.OnesCount64(w)
			}
			u(nf)
			last := -1
			for wi, w := range r.files {
				for w != 0 {
					n := wi*64 + bits.TrailingZeros64(w)
					u(n - last - 1)
					last = n
					w &= w - 1
				}
			}
		}
	}
	return b
}

var errStatsCache = errors.New("stats cache: damaged")

// statsDecoder reads a cache body; the first fault sticks.
type statsDecoder struct {
	b   []byte
	err error
}

func (d *statsDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errStatsCache
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number that is at most max (and fits an int).
func (d *statsDecoder) count(max int) int {
	v := d.uint()
	if v > uint64(max) {
		d.err = errStatsCache
		return 0
	}
	return int(v)
}

func (d *statsDecoder) str() string {
	v := d.uint()
	if d.err != nil || v > uint64(len(d.b)) {
		d.err = errStatsCache
		return ""
	}
	n := int(v)
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// decodeStatsCache reads a cache body, and checks that its counts add up as
// a count's do.
func decodeStatsCache(body []byte) (statsKey, *statState, error) {
	const big = 1 << 40 // no count of a real ledger comes near
	d := &statsDecoder{b: body}
	var k statsKey
	k.end = int64(d.count(big))
	if d.err != nil || len(d.b) < 32 {
		return k, nil, errStatsCache
	}
	copy(k.tail[:], d.b)
	d.b = d.b[32:]
	s := newStatState()
	s.lines, s.records, s.unpars = d.count(big), d.count(big), d.count(big)
	if s.records+s.unpars != s.lines {
		return k, nil, errStatsCache
	}
	np := d.count(len(d.b))
	s.paths = make([]string, 0, np)
	for range np {
		p := d.str()
		if _, dup := s.pathNo[p]; dup || d.err != nil {
			return k, nil, errStatsCache
		}
		s.path(p)
	}
	// Bit sets are sized by the largest path number of a row: bound what
	// a damaged body can make us allocate.
	words := 0
	for tab := range s.tabs {
		nr := d.count(len(d.b))
		prev, sum := "", 0
		for i := range nr {
			key := d.str()
			if d.err != nil || (i > 0 && key <= prev) {
				return k, nil, errStatsCache
			}
			prev = key
			r := &stateRow{codes: map[string]int{}}
			r.records, r.changes, r.violations, r.denials = d.count(big), d.count(big), d.count(big), d.count(big)
			la, n := binary.Varint(d.b)
			if d.err != nil || n <= 0 || la > big || la < -big {
				return k, nil, errStatsCache
			}
			d.b = d.b[n:]
			r.linesAdded = int(la)
			if r.records != r.changes+r.denials || r.violations > r.changes {
				return k, nil, errStatsCache
			}
			nc := d.count(len(d.b))
			prevCode, codes := "", 0
			for j := range nc {
				c := d.str()
				v := d.count(big)
				if d.err != nil || (j > 0 && c <= prevCode) || v == 0 {
					return k, nil, errStatsCache
				}
				prevCode = c
				r.codes[c] = v
				codes += v
			}
			if codes != r.denials {
				return k, nil, errStatsCache
			}
			nf := d.count(len(d.b))
			last := -1
			for range nf {
				n := last + 1 + d.count(np)
				if d.err != nil || n >= np {
					return k, nil, errStatsCache
				}
				if words += n/64 + 1 - len(r.files); words > 64*len(body)+1024 {
					return k, nil, errStatsCache
				}
				r.setFile(int32(n))
				last = n
			}
			sum += r.records
			s.tabs[tab][key] = r
		}
		if sum != s.records {
			return k, nil, errStatsCache
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return k, nil, errStatsCache
	}
	return k, s, nil
}
