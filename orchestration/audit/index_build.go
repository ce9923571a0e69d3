package audit

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// segChunk is one chunk of the ledger indexed by a worker: the segment's
// entries for its lines, line numbers counted from the chunk's first line.
// The consumer adds them to the segment in file order, adding the chunk's
// first line to every number, and hands the chunk back for reuse.
type segChunk struct {
	n      int
	lines  []byte // lineEntry each, offsets absolute
	ids    []idEnt
	ranges []rangeEnt
	worker int
	// pairs files line rel under the worker's key number k as k<<32|rel;
	// newKeys are the keys the worker numbered first in this chunk, in
	// order (a worker's chunks are consumed in the order it read them, so
	// a number is always defined before it is used).
	pairs   []uint64
	newKeys []string
	last    []byte // the chunk's last line, without its newline (a copy)
	end     int64  // the offset just past its last line
}

// idEnt is an entry of the id table: the id as two big-endian halves, so
// that ids compare as numbers.
type idEnt struct {
	hi, lo uint64
	rel    uint32
}

// rangeEnt is an entry of the range table.
type rangeEnt struct {
	h8      uint64
	rel, ln uint32
}

// segWorker is one index worker's state.
type segWorker struct {
	view     orchestration.CanonView
	key      []byte            // scratch for a key
	dict     map[string]uint32 // key -> its number
	lineKeys []uint32          // the keys of the current line
	// Records come in runs of one session, tool, intent: the last value
	// filed under each prefix and its number skip the dictionary.
	lastVal   [256][]byte
	lastNo    [256]uint32
	hasLast   [256]bool
	free      chan *segChunk // chunks the consumer is done with
	lastPairs int
}

func (w *segWorker) chunk(worker int, c *lineChunk) *segChunk {
	if w.dict == nil {
		w.dict = map[string]uint32{}
	}
	var out *segChunk
	select {
	case out = <-w.free:
		*out = segChunk{lines: out.lines[:0], ids: out.ids[:0], ranges: out.ranges[:0], last: out.last[:0]}
	default:
		out = &segChunk{}
	}
	// The pairs stay with the segment until it is written: a new table
	// each chunk, sized from the last.
	out.pairs = make([]uint64, 0, w.lastPairs+w.lastPairs/4)
	out.worker = worker
	var lastRaw []byte
	c.eachLine(func(at int, full, raw []byte) {
		w.line(out, uint32(out.n), c.off+int64(at), len(full), raw)
		out.n++
		lastRaw = raw
	})
	out.last = append(out.last, lastRaw...)
	out.end = c.off + int64(len(c.data))
	w.lastPairs = len(out.pairs)
	return out
}

// addKey files the current line under prefix+value, once.
func (w *segWorker) addKey(out *segChunk, rel uint32, prefix string, value []byte) {
	p := prefix[0]
	var k uint32
	if w.hasLast[p] && string(w.lastVal[p]) == string(value) {
		k = w.lastNo[p]
	} else {
		w.key = append(append(w.key[:0], prefix...), value...)
		var ok bool
		k, ok = w.dict[string(w.key)]
		if !ok {
			k = uint32(len(w.dict))
			name := string(w.key)
			w.dict[name] = k
			out.newKeys = append(out.newKeys, name)
		}
		w.lastVal[p] = append(w.lastVal[p][:0], value...)
		w.lastNo[p], w.hasLast[p] = k, true
	}
	for _, x := range w.lineKeys {
		if x == k {
			return
		}
	}
	w.lineKeys = append(w.lineKeys, k)
	out.pairs = append(out.pairs, uint64(k)<<32|uint64(rel))
}

func (w *segWorker) line(out *segChunk, rel uint32, off int64, size int, raw []byte) {
	w.lineKeys = w.lineKeys[:0]
	var flags uint32
	var ts int64
	v := &w.view
	switch {
	case v.Read(raw):
		flags |= flagParsed
		ts = v.Time().UnixNano()
		var id [16]byte
		decodeUUIDText(v.ID, &id)
		out.ids = append(out.ids, idEntOf(id, rel))
		change := len(v.Files) > 0
		if v.HasMeta {
			change = string(v.Decision) != orchestration.DecisionDeny && string(v.Mutation) != orchestration.MutationDenial
			if len(v.Intent) > 0 {
				w.addKey(out, rel, keyIntent, v.Intent)
			}
			if len(v.Session) > 0 {
				w.addKey(out, rel, keySession, v.Session)
			}
			if len(v.Tool) > 0 {
				w.addKey(out, rel, keyTool, v.Tool)
			}
			switch {
			case !change:
				flags |= flagDenial
				w.addKey(out, rel, keyDenial, nil)
				if code := indexDenialCode(v.Denial); len(code) > 0 {
					w.addKey(out, rel, keyDenial, code)
				}
			case string(v.Decision) == orchestration.DecisionViolation || string(v.Mutation) == orchestration.MutationViolation:
				flags |= flagViolate
				w.addKey(out, rel, keyViolate, nil)
			}
		} else if rec := v.Record(); rec.Intent() != "" {
			w.addKey(out, rel, keyIntent, []byte(rec.Intent()))
		}
		if change {
			flags |= flagChange
			w.addKey(out, rel, keyChange, nil)
		}
		for _, f := range v.Files {
			w.addKey(out, rel, keyPath, f.Path)
			for _, c := range v.Convs[f.ConvFrom:f.ConvTo] {
				if c.HasContributor && len(c.ModelID) > 0 {
					w.addKey(out, rel, keyModel, c.ModelID)
				}
				if !change {
					continue
				}
				for _, r := range v.Ranges[c.RangeFrom:c.RangeTo] {
					if h8, ok := hashPrefixBytes(r.ContentHash); ok {
						out.ranges = append(out.ranges, rangeEnt{h8, rel, uint32(r.EndLine - r.StartLine + 1)})
					}
				}
			}
		}
	default:
		rec, err := orchestration.ParseRecord(raw)
		if err != nil {
			break
		}
		flags = w.recordKeys(out, rel, rec)
		ts = rec.Timestamp.UnixNano()
	}
	out.lines = binary.LittleEndian.AppendUint64(out.lines, uint64(off))
	out.lines = binary.LittleEndian.AppendUint32(out.lines, uint32(size))
	out.lines = binary.LittleEndian.AppendUint32(out.lines, flags)
	out.lines = binary.LittleEndian.AppendUint64(out.lines, uint64(ts))
}

// hashPrefixBytes is hashPrefix of a content hash read in place.
func hashPrefixBytes(h []byte) (uint64, bool) {
	const pre = orchestration.HashPrefix
	if len(h) < len(pre)+16 || string(h[:len(pre)]) != pre {
		return 0, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], h[len(pre):len(pre)+16]); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:]), true
}

// indexDenialCode is denialCode for a denial read in place.
func indexDenialCode(d []byte) []byte {
	if len(d) == 0 {
		return nil
	}
	if code, ok := plainDenialCode(d); ok {
		return code
	}
	return []byte(denialCode(d))
}

// recordKeys files a record ParseRecord read (another writer's line).
func (w *segWorker) recordKeys(out *segChunk, rel uint32, rec *orchestration.Record) uint32 {
	flags := uint32(flagParsed)
	if id, err := uuid.Parse(rec.ID); err == nil {
		out.ids = append(out.ids, idEntOf(id, rel))
	}
	change := isChange(rec)
	if intent := rec.Intent(); intent != "" {
		w.addKey(out, rel, keyIntent, []byte(intent))
	}
	if m := rec.Meta; m != nil {
		if m.Session != "" {
			w.addKey(out, rel, keySession, []byte(m.Session))
		}
		if m.Tool != "" {
			w.addKey(out, rel, keyTool, []byte(m.Tool))
		}
		switch {
		case m.Decision == orchestration.DecisionDeny || m.Mutation == orchestration.MutationDenial:
			flags |= flagDenial
			w.addKey(out, rel, keyDenial, nil)
			if code := denialCode(m.Denial); code != "" {
				w.addKey(out, rel, keyDenial, []byte(code))
			}
		case m.Decision == orchestration.DecisionViolation || m.Mutation == orchestration.MutationViolation:
			flags |= flagViolate
			w.addKey(out, rel, keyViolate, nil)
		}
	}
	if change {
		flags |= flagChange
		w.addKey(out, rel, keyChange, nil)
	}
	for _, f := range rec.Files {
		w.addKey(out, rel, keyPath, []byte(f.Path))
		for _, c := range f.Conversations {
			if c.Contributor != nil && c.Contributor.ModelID != "" {
				w.addKey(out, rel, keyModel, []byte(c.Contributor.ModelID))
			}
			if !change {
				continue
			}
			for _, r := range c.Ranges {
				if h8, ok := hashPrefix(r.ContentHash); ok {
					out.ranges = append(out.ranges, rangeEnt{h8, rel, uint32(r.EndLine - r.StartLine + 1)})
				}
			}
		}
	}
	return flags
}

func idEntOf(id [16]byte, rel uint32) idEnt {
	return idEnt{hi: binary.BigEndian.Uint64(id[:8]), lo: binary.BigEndian.Uint64(id[8:]), rel: rel}
}

// build indexes the complete ledger lines from byte from (line firstLine) up
// to byte to (0: the end) into a new segment file; nil when there are none.
// It reads no file of the workspace: snapshots are taken from bytes already
// in hand (at trace time by Capture, and by blame of the file it blames),
// not by reading every file the new lines touched.
//
// The line table goes to the file as the chunks come in; what needs the
// whole segment to be ordered (ids, ranges, postings by key) is kept in
// flat tables and sorted at the end.
func (ix *Index) build(firstLine int, from, to int64) (*segmentRef, string, error) {
	tmp, err := os.CreateTemp(ix.dir, fmt.Sprintf("seg-%09d-*.bin", firstLine))
	if err != nil {
		return nil, "", noIndex(err)
	}
	sb := &segBuild{firstLine: firstLine, firstOff: from, f: tmp, w: bufio.NewWriterSize(tmp, 1<<20), keyNo: map[string]int32{}}
	ref, last, err := ix.buildInto(sb, from, to)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || ref == nil {
		os.Remove(tmp.Name())
		return nil, "", err
	}
	ref.Name = filepath.Base(tmp.Name())
	return ref, orchestration.LineLink(last), nil
}

// segBuild is a segment being built.
type segBuild struct {
	firstLine int
	firstOff  int64
	f         *os.File
	w         *bufio.Writer // the file, from its line table on
	n         int
	end       int64
	last      []byte
	ids       []idEnt
	ranges    []rangeEnt
	pairs     []pairChunk
	keys      []string // key number -> key
	keyNo     map[string]int32
	globalOf  [][]int32 // a worker's key number -> the segment's
}

// pairChunk is the (key, line) pairs of one chunk: the key numbered by
// the worker that read it, the line counted from base.
type pairChunk struct {
	pairs  []uint64
	worker int
	base   uint32
}

func (ix *Index) buildInto(sb *segBuild, from, to int64) (*segmentRef, []byte, error) {
	var hdr [segHeader]byte
	sb.w.Write(hdr[:]) // written again at the end
	workers := runtime.GOMAXPROCS(0)
	ws := make([]segWorker, workers)
	free := make(chan *segChunk, 2*workers+2)
	for i := range ws {
		ws[i].free = free
	}
	sb.globalOf = make([][]int32, workers)
	total := to - from
	if to <= 0 {
		if fi, err := os.Stat(ix.ledger); err == nil {
			total = fi.Size() - from
		}
	}
	err := runChunks(ix.ledger, chunkOptions{from: from, to: to, workers: workers, size: ix.chunkSize},
		func(w int, c *lineChunk) *segChunk { return ws[w].chunk(w, c) },
		func(c *lineChunk, sc *segChunk) error {
			defer func() {
				select {
				case free <- sc:
				default:
				}
			}()
			if sc.n == 0 {
				return nil
			}
			if sb.n == 0 && total > 0 {
				// Size the tables for the whole range from the first
				// chunk, so they do not grow by copying.
				per := float64(total) / float64(max(len(c.data), 1)) * 1.05
				sb.ids = make([]idEnt, 0, int(per*float64(len(sc.ids))))
				sb.ranges = make([]rangeEnt, 0, int(per*float64(len(sc.ranges))))
				sb.pairs = make([]pairChunk, 0, int(per)+1)
			}
			base := uint32(sb.n)
			if _, err := sb.w.Write(sc.lines); err != nil {
				return noIndex(err)
			}
			for _, e := range sc.ids {
				e.rel += base
				sb.ids = append(sb.ids, e)
			}
			for _, e := range sc.ranges {
				e.rel += base
				sb.ranges = append(sb.ranges, e)
			}
			gl := sb.globalOf[sc.worker]
			for _, k := range sc.newKeys {
				i, ok := sb.keyNo[k]
				if !ok {
					i = int32(len(sb.keys))
					sb.keyNo[k] = i
					sb.keys = append(sb.keys, k)
				}
				gl = append(gl, i)
			}
			sb.globalOf[sc.worker] = gl
			sb.pairs = append(sb.pairs, pairChunk{pairs: sc.pairs, worker: sc.worker, base: base})
			sc.pairs = nil
			sb.n += sc.n
			sb.end = sc.end
			sb.last = append(sb.last[:0], sc.last...)
			return nil
		})
	if err != nil {
		if errors.Is(err, ErrNoIndex) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("index: %w", err)
	}
	if sb.n == 0 {
		return nil, nil, nil
	}
	if err := sb.finish(); err != nil {
		return nil, nil, noIndex(err)
	}
	return &segmentRef{FirstLine: sb.firstLine, Lines: sb.n, FirstOff: from, Bytes: sb.end - from}, sb.last, nil
}

// finish writes the sections after the line table, then the header.
func (sb *segBuild) finish() error {
	// The tables sort on another core while the postings are laid out.
	sorted := make(chan struct{})
	go func() {
		sortIDEnts(sb.ids)
		sortRangeEnts(sb.ranges)
		close(sorted)
	}()
	// Keys sorted by name; each key's postings are its lines in ledger
	// order. A counting sort of the pairs, on every core: each part (a run
	// of chunks) counts its pairs per key, a key's lines from part p go
	// after those of the parts before, and the parts scatter at once.
	parts := splitPairs(sb.pairs, runtime.GOMAXPROCS(0))
	nk := len(sb.keys)
	counts := make([][]uint32, len(parts))
	each := func(fn func(p int)) {
		var wg sync.WaitGroup
		for p := range parts {
			wg.Add(1)
			go func() { defer wg.Done(); fn(p) }()
		}
		wg.Wait()
	}
	each(func(p int) {
		c := make([]uint32, nk)
		for _, pc := range parts[p] {
			gl := sb.globalOf[pc.worker]
			for _, x := range pc.pairs {
				c[gl[x>>32]]++
			}
		}
		counts[p] = c
	})
	order := make([]int32, nk)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(sb.keys[a], sb.keys[b]) })
	keyTab := make([]byte, 0, keyEntry*nk)
	var keyBlob []byte
	at := uint32(0)
	for _, k := range order {
		first := at
		for p := range parts {
			n := counts[p][k]
			counts[p][k] = at // from here on: where part p's next line of k goes
			at += n
		}
		keyTab = binary.LittleEndian.AppendUint32(keyTab, uint32(len(keyBlob)))
		keyTab = binary.LittleEndian.AppendUint32(keyTab, uint32(len(sb.keys[k])))
		keyTab = binary.LittleEndian.AppendUint32(keyTab, first)
		keyTab = binary.LittleEndian.AppendUint32(keyTab, at-first)
		keyBlob = append(keyBlob, sb.keys[k]...)
	}
	postTab := make([]byte, 4*int(at))
	each(func(p int) {
		next := counts[p]
		for _, pc := range parts[p] {
			gl := sb.globalOf[pc.worker]
			for _, x := range pc.pairs {
				k := gl[x>>32]
				binary.LittleEndian.PutUint32(postTab[4*next[k]:], uint32(x)+pc.base)
				next[k]++
			}
		}
	})
	sb.pairs = nil
	<-sorted

	w := sb.w
	var e [idEntry]byte
	for _, x := range sb.ids {
		binary.BigEndian.PutUint64(e[:], x.hi)
		binary.BigEndian.PutUint64(e[8:], x.lo)
		binary.LittleEndian.PutUint32(e[16:], x.rel)
		w.Write(e[:idEntry])
	}
	w.Write(keyTab)
	w.Write(keyBlob)
	w.Write(postTab)
	for _, x := range sb.ranges {
		binary.LittleEndian.PutUint64(e[:], x.h8)
		binary.LittleEndian.PutUint32(e[8:], x.rel)
		binary.LittleEndian.PutUint32(e[12:], x.ln)
		w.Write(e[:rangeEntry])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	h := make([]byte, 0, segHeader)
	h = append(h, segMagic...)
	for _, v := range []int{sb.firstLine, sb.n, len(sb.ids), len(sb.keys), int(at), len(sb.ranges)} {
		h = binary.LittleEndian.AppendUint32(h, uint32(v))
	}
	h = binary.LittleEndian.AppendUint64(h, uint64(sb.firstOff))
	off := uint64(segHeader)
	for _, size := range []int{lineEntry * sb.n, idEntry * len(sb.ids), len(keyTab), len(keyBlob), len(postTab), rangeEntry * len(sb.ranges)} {
		h = binary.LittleEndian.AppendUint64(h, off)
		off += uint64(size)
	}
	_, err := sb.f.WriteAt(h, 0)
	return err
}

// splitPairs cuts the chunks' pairs into at most n runs of chunks with
// about as many pairs each.
func splitPairs(pcs []pairChunk, n int) [][]pairChunk {
	total := 0
	for _, pc := range pcs {
		total += len(pc.pairs)
	}
	var parts [][]pairChunk
	start, sum := 0, 0
	for i, pc := range pcs {
		sum += len(pc.pairs)
		if len(parts) < n-1 && sum*n >= total*(len(parts)+1) {
			parts = append(parts, pcs[start:i+1])
			start = i + 1
		}
	}
	if start < len(pcs) || len(parts) == 0 {
		parts = append(parts, pcs[start:])
	}
	return parts
}

// sortIDEnts sorts the id table by id, then line. Record ids are UUIDv7, in
// time order but for records appended at once by several processes and
// ledgers merged: usually sorted already, which is checked first.
func sortIDEnts(es []idEnt) {
	less := func(x, y idEnt) int {
		if c := cmp.Compare(x.hi, y.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(x.lo, y.lo); c != 0 {
			return c
		}
		return cmp.Compare(x.rel, y.rel)
	}
	if !slices.IsSortedFunc(es, less) {
		slices.SortFunc(es, less)
	}
}

// sortRangeEnts sorts the range table by hash prefix, then line, then
// length. The prefixes are uniformly random, so a radix sort on them, stable
// (the entries come in line order), leaves only runs of one prefix on one
// line to put in order of length.
func sortRangeEnts(es []rangeEnt) {
	less := func(x, y rangeEnt) int {
		if c := cmp.Compare(x.h8, y.h8); c != 0 {
			return c
		}
		if c := cmp.Compare(x.rel, y.rel); c != 0 {
			return c
		}
		return cmp.Compare(x.ln, y.ln)
	}
	if len(es) < 1<<12 || !slices.IsSortedFunc(es, func(x, y rangeEnt) int { return cmp.Compare(x.rel, y.rel) }) {
		slices.SortFunc(es, less)
		return
	}
	src, dst := es, make([]rangeEnt, len(es))
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count[:])
		for _, e := range src {
			count[(e.h8>>shift)&0xffff]++
		}
		if count[(src[0].h8>>shift)&0xffff] == len(src) {
			continue // one digit for all: this pass would not move anything
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, e := range src {
			d := (e.h8 >> shift) & 0xffff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].h8 == es[i].h8 && es[j].rel == es[i].rel {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(es[i:j], less)
		}
		i = j
	}
}
