package audit

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// segChunk is one chunk of the ledger indexed by a worker: the segment's
// sections for its lines, line numbers counted from the chunk's first line.
// The consumer appends them to the segment in file order, adding the
// chunk's first line to every number.
type segChunk struct {
	n      int
	lines  []byte // lineEntry each, offsets absolute
	ids    []byte // idEntry each
	ranges []byte // rangeEntry each
	worker int
	// pairs files line rel under the worker's key number k as k<<32|rel;
	// newKeys are the keys the worker numbered first in this chunk, in
	// order (a worker's chunks are consumed in the order it read them, so
	// a number is always defined before it is used).
	pairs   []uint64
	newKeys []string
	last    []byte // the chunk's last line, without its newline (a copy)
}

// segWorker is one index worker's state.
type segWorker struct {
	view     orchestration.CanonView
	key      []byte            // scratch for a key
	dict     map[string]uint32 // key -> its number
	lineKeys []uint32          // the keys of the current line
}

func (w *segWorker) chunk(worker int, c *lineChunk) *segChunk {
	if w.dict == nil {
		w.dict = map[string]uint32{}
	}
	out := &segChunk{worker: worker}
	var lastRaw []byte
	c.eachLine(func(at int, full, raw []byte) {
		w.line(out, uint32(out.n), c.off+int64(at), len(full), raw)
		out.n++
		lastRaw = raw
	})
	out.last = append([]byte(nil), lastRaw...)
	return out
}

// addKey files the current line under prefix+value, once.
func (w *segWorker) addKey(out *segChunk, rel uint32, prefix string, value []byte) {
	w.key = append(append(w.key[:0], prefix...), value...)
	k, ok := w.dict[string(w.key)]
	if !ok {
		k = uint32(len(w.dict))
		name := string(w.key)
		w.dict[name] = k
		out.newKeys = append(out.newKeys, name)
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
		out.ids = append(out.ids, id[:]...)
		out.ids = binary.LittleEndian.AppendUint32(out.ids, rel)
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
						out.ranges = binary.LittleEndian.AppendUint64(out.ranges, h8)
						out.ranges = binary.LittleEndian.AppendUint32(out.ranges, rel)
						out.ranges = binary.LittleEndian.AppendUint32(out.ranges, uint32(r.EndLine-r.StartLine+1))
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
		out.ids = append(out.ids, id[:]...)
		out.ids = binary.LittleEndian.AppendUint32(out.ids, rel)
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
					out.ranges = binary.LittleEndian.AppendUint64(out.ranges, h8)
					out.ranges = binary.LittleEndian.AppendUint32(out.ranges, rel)
					out.ranges = binary.LittleEndian.AppendUint32(out.ranges, uint32(r.EndLine-r.StartLine+1))
				}
			}
		}
	}
	return flags
}

// build indexes the complete ledger lines from byte from (line firstLine) up
// to byte to (0: the end) into a new segment file; nil when there are none.
// It reads no file of the workspace: snapshots are taken from bytes already
// in hand (at trace time by Capture, and by blame of the file it blames),
// not by reading every file the new lines touched.
func (ix *Index) build(firstLine int, from, to int64) (*segmentRef, string, error) {
	b, last, n, err := ix.collect(firstLine, from, to)
	if err != nil {
		return nil, "", err
	}
	if n == 0 {
		return nil, "", nil
	}
	end := from
	if len(b.lines) >= lineEntry {
		e := decodeEntry(b.lines[len(b.lines)-lineEntry:])
		end = e.Off + int64(e.Size)
	}
	parts := b.encode(n)
	tmp, err := os.CreateTemp(ix.dir, fmt.Sprintf("seg-%09d-*.bin", firstLine))
	if err != nil {
		return nil, "", noIndex(err)
	}
	bufs := net.Buffers(parts)
	_, err = bufs.WriteTo(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, "", noIndex(err)
	}
	return &segmentRef{Name: filepath.Base(tmp.Name()), FirstLine: firstLine, Lines: n, FirstOff: from, Bytes: end - from},
		orchestration.LineLink(last), nil
}

// collect reads the lines of a segment in chunks on every core; each
// chunk's sections are appended to the segment's in file order.
func (ix *Index) collect(firstLine int, from, to int64) (b *segBuilder, last []byte, n int, err error) {
	b = &segBuilder{firstLine: firstLine, firstOff: from, post: map[string][]uint32{}}
	ws := make([]segWorker, runtime.GOMAXPROCS(0))
	globalOf := make([][]int32, len(ws)) // worker key number -> list
	keyNo := map[string]int32{}
	var lists [][]uint32
	total := to - from
	if to <= 0 {
		if fi, err := os.Stat(ix.ledger); err == nil {
			total = fi.Size() - from
		}
	}
	err = runChunks(ix.ledger, chunkOptions{from: from, to: to, workers: len(ws), size: ix.chunkSize},
		func(w int, c *lineChunk) *segChunk { return ws[w].chunk(w, c) },
		func(c *lineChunk, sc *segChunk) error {
			if sc.n == 0 {
				return nil
			}
			base := uint32(n)
			if n == 0 && total > 0 {
				// Size the sections for the whole range from the first
				// chunk, so they do not grow by copying.
				per := float64(total) / float64(max(len(c.data), 1)) * 1.05
				b.lines = make([]byte, 0, int(per*float64(len(sc.lines))))
				b.ids = make([]byte, 0, int(per*float64(len(sc.ids))))
				b.ranges = make([]byte, 0, int(per*float64(len(sc.ranges))))
			}
			b.lines = append(b.lines, sc.lines...)
			for i := 0; i+idEntry <= len(sc.ids); i += idEntry {
				rel := binary.LittleEndian.Uint32(sc.ids[i+16:])
				b.ids = append(b.ids, sc.ids[i:i+16]...)
				b.ids = binary.LittleEndian.AppendUint32(b.ids, rel+base)
			}
			for i := 0; i+rangeEntry <= len(sc.ranges); i += rangeEntry {
				rel := binary.LittleEndian.Uint32(sc.ranges[i+8:])
				b.ranges = append(b.ranges, sc.ranges[i:i+8]...)
				b.ranges = binary.LittleEndian.AppendUint32(b.ranges, rel+base)
				b.ranges = append(b.ranges, sc.ranges[i+12:i+16]...)
			}
			gl := globalOf[sc.worker]
			for _, k := range sc.newKeys {
				i, ok := keyNo[k]
				if !ok {
					i = int32(len(lists))
					keyNo[k] = i
					lists = append(lists, nil)
				}
				gl = append(gl, i)
			}
			globalOf[sc.worker] = gl
			for _, p := range sc.pairs {
				i := gl[p>>32]
				lists[i] = append(lists[i], uint32(p)+base)
			}
			n += sc.n
			last = sc.last
			return nil
		})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("index: %w", err)
	}
	for k, i := range keyNo {
		b.post[k] = lists[i]
	}
	return b, last, n, nil
}
