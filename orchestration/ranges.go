package orchestration

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
	"strings"
)

// Range is a run of lines of a file after a change: 1-based, inclusive, with the
// content hash of those lines (see RangeHash). It is an Agent Trace range.
type Range struct {
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	ContentHash string `json:"content_hash,omitempty"`
	// Contributor overrides the conversation's contributor for this range only
	// (Agent Trace allows it for hand-offs). intentgate never writes it; it is
	// kept so that records of other tools survive a read and a write.
	Contributor *TraceContributor `json:"contributor,omitempty"`
}

// HashPrefix starts every hash intentgate writes: content hashes, file hashes
// in chain links.
const HashPrefix = "sha256:"

// ComputeRanges diffs two versions of a file line by line and returns the
// inserted or modified lines of after as maximal runs, sorted, with their
// content hashes, and how many lines of before were removed.
//
// Lines are split on "\n"; a last line without a newline is still a line, and
// "\r\n" counts as "\n" both when comparing and when hashing, so a file whose
// line endings alone changed has no ranges. The diff is Myers' O(ND) algorithm
// (in linear space, after trimming the common prefix and suffix and setting
// aside lines that occur on one side only), so small edits of large files are
// cheap; for very large differences it gives up minimality, never correctness:
// the unchanged lines are always a common subsequence of both versions.
func ComputeRanges(before, after []byte) (ranges []Range, deletedLines int) {
	// The lines both versions begin and end with are set aside first, on
	// the bytes: only the lines in between are split and diffed, a few for
	// a small edit of a large file.
	lo, pa, pb := commonLeadingLines(before, after)
	ea, eb := commonTrailingLines(before[pa:], after[pb:])
	a, b := SplitLines(before[pa:pa+ea]), SplitLines(after[pb:pb+eb])
	removed, inserted := rangesDiff(a, b)
	for _, r := range removed {
		if r {
			deletedLines++
		}
	}
	for j := 0; j < len(b); {
		if !inserted[j] {
			j++
			continue
		}
		k := j
		for k < len(b) && inserted[k] {
			k++
		}
		ranges = append(ranges, Range{StartLine: lo + j + 1, EndLine: lo + k, ContentHash: rangesHash(b[j:k])})
		j = k
	}
	return ranges, deletedLines
}

// commonLeadingLines returns how many lines a and b begin with in common
// (lines as SplitLines cuts them) and the offsets in a and in b just past
// them.
func commonLeadingLines(a, b []byte) (n, pa, pb int) {
	// The whole lines of the common bytes...
	p := CommonPrefixLen(a, b)
	pa = bytes.LastIndexByte(a[:p], '\n') + 1
	pb = pa
	n = bytes.Count(a[:pa], []byte{'\n'})
	// ...and the lines that are equal once "\r\n" counts as "\n" and a
	// last line lacks its newline.
	for pa < len(a) && pb < len(b) {
		la, na := lineFrom(a, pa)
		lb, nb := lineFrom(b, pb)
		if !bytes.Equal(la, lb) {
			break
		}
		n++
		pa, pb = na, nb
	}
	return n, pa, pb
}

// commonTrailingLines returns the offsets in a and in b where the lines they
// end with in common begin (len(a) and len(b) for none). a and b each begin
// at a line start.
func commonTrailingLines(a, b []byte) (ea, eb int) {
	s := CommonSuffixLen(a, b)
	ea, eb = len(a)-s, len(b)-s
	// Forward to a line start on both sides: a[ea:] and b[eb:] are then
	// the same whole lines.
	if !(ea == 0 || a[ea-1] == '\n') || !(eb == 0 || b[eb-1] == '\n') {
		if i := bytes.IndexByte(a[ea:], '\n'); i >= 0 {
			ea, eb = ea+i+1, eb+i+1
		} else {
			ea, eb = len(a), len(b)
		}
	}
	// Then back over lines equal once "\r\n" counts as "\n" and a last
	// line lacks its newline.
	for ea > 0 && eb > 0 {
		la, sa := lineBefore(a, ea)
		lb, sb := lineBefore(b, eb)
		if !bytes.Equal(la, lb) {
			break
		}
		ea, eb = sa, sb
	}
	return ea, eb
}

// lineFrom returns the line of c starting at offset i < len(c), without its
// terminator, and the offset of the next line.
func lineFrom(c []byte, i int) (line []byte, next int) {
	j := bytes.IndexByte(c[i:], '\n')
	if j < 0 {
		return c[i:], len(c)
	}
	return trimCR(c[i : i+j]), i + j + 1
}

// lineBefore returns the line of c that ends at offset end > 0 (a line start,
// or len(c)), without its terminator, and the offset where it starts.
func lineBefore(c []byte, end int) (line []byte, start int) {
	if c[end-1] != '\n' {
		// The last line, without a newline: a "\r" there is its own.
		start = bytes.LastIndexByte(c[:end], '\n') + 1
		return c[start:end], start
	}
	start = bytes.LastIndexByte(c[:end-1], '\n') + 1
	return trimCR(c[start : end-1]), start
}

func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// commonBlock is how many bytes CommonPrefixLen and CommonSuffixLen
// compare at once (bytes.Equal, vectorised) before they look closer.
const commonBlock = 256

// CommonPrefixLen returns the length of the longest common prefix of a and b.
func CommonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+commonBlock <= n && bytes.Equal(a[i:i+commonBlock], b[i:i+commonBlock]) {
		i += commonBlock
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// CommonSuffixLen returns the length of the longest common suffix of a and b.
func CommonSuffixLen(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	i := 0 // a[n-i:] == b[n-i:]
	for i+commonBlock <= n && bytes.Equal(a[n-i-commonBlock:n-i], b[n-i-commonBlock:n-i]) {
		i += commonBlock
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.BigEndian.Uint64(a[n-i-8:]) ^ binary.BigEndian.Uint64(b[n-i-8:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[n-i-1] == b[n-i-1] {
		i++
	}
	return i
}

// RangeHash is the content hash of lines start..end (1-based, inclusive) of
// content: "sha256:" and the lowercase hex SHA-256 of those lines, "\r\n"
// normalized to "\n", each line (the last one too) followed by "\n". It
// returns "" when the range is not inside content.
func RangeHash(content []byte, start, end int) string {
	lines := SplitLines(content)
	if start < 1 || end < start || end > len(lines) {
		return ""
	}
	return rangesHash(lines[start-1 : end])
}

// HashLines is RangeHash for lines already split: each argument is one line,
// with or without its "\n" or "\r\n" terminator.
func HashLines(lines ...string) string {
	h := sha256.New()
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\r")
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return HashPrefix + hex.EncodeToString(h.Sum(nil))
}

// SplitLines splits content into lines without their terminators; a "\r"
// directly before a "\n" belongs to the terminator. The lines alias content.
func SplitLines(content []byte) [][]byte {
	if len(content) == 0 {
		return nil
	}
	lines := make([][]byte, 0, bytes.Count(content, []byte{'\n'})+1)
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			lines = append(lines, content)
			break
		}
		line := content[:i]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		lines = append(lines, line)
		content = content[i+1:]
	}
	return lines
}

func rangesHash(lines [][]byte) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	return HashPrefix + hex.EncodeToString(h.Sum(nil))
}

// rangesDiff returns which lines of a were removed and which lines of b were
// inserted; the lines marked in neither form a longest (or, for very costly
// inputs, a long) common subsequence of a and b.
func rangesDiff(a, b [][]byte) (removed, inserted []bool) {
	removed, inserted = make([]bool, len(a)), make([]bool, len(b))
	lo := 0
	for lo < len(a) && lo < len(b) && bytes.Equal(a[lo], b[lo]) {
		lo++
	}
	ha, hb := len(a), len(b)
	for ha > lo && hb > lo && bytes.Equal(a[ha-1], b[hb-1]) {
		ha--
		hb--
	}
	if lo == ha || lo == hb {
		for i := lo; i < ha; i++ {
			removed[i] = true
		}
		for j := lo; j < hb; j++ {
			inserted[j] = true
		}
		return removed, inserted
	}

	// Number the middle lines, then set aside those that occur on one side
	// only: they cannot match, and leaving them out does not change the
	// longest common subsequence but can shrink the problem enormously
	// (a rewritten file has almost none left).
	ids := make(map[string]int, (ha-lo)+(hb-lo))
	xid := make([]int, ha-lo)
	yid := make([]int, hb-lo)
	var inA, inB []bool
	intern := func(l []byte) int {
		id, ok := ids[string(l)]
		if !ok {
			id = len(ids)
			ids[string(l)] = id
			inA, inB = append(inA, false), append(inB, false)
		}
		return id
	}
	for i := range xid {
		xid[i] = intern(a[lo+i])
		inA[xid[i]] = true
	}
	for j := range yid {
		yid[j] = intern(b[lo+j])
		inB[yid[j]] = true
	}
	var xs, ys, xpos, ypos []int
	for i, id := range xid {
		if inB[id] {
			xs, xpos = append(xs, id), append(xpos, lo+i)
		} else {
			removed[lo+i] = true
		}
	}
	for j, id := range yid {
		if inA[id] {
			ys, ypos = append(ys, id), append(ypos, lo+j)
		} else {
			inserted[lo+j] = true
		}
	}
	if len(xs) == 0 || len(ys) == 0 {
		for _, i := range xpos {
			removed[i] = true
		}
		for _, j := range ypos {
			inserted[j] = true
		}
		return removed, inserted
	}

	d := newRangesDiffer(xs, ys)
	d.compare(0, len(xs), 0, len(ys), false)
	for i, r := range d.removed {
		if r {
			removed[xpos[i]] = true
		}
	}
	for j, r := range d.inserted {
		if r {
			inserted[ypos[j]] = true
		}
	}
	return removed, inserted
}

// rangesDiffer is Myers' linear-space diff with the cost cut-off of GNU
// diffutils' diffseq.h, on sequences of line numbers.
type rangesDiffer struct {
	x, y              []int
	fd, bd            []int // furthest x reached on each diagonal, indexed by diagonal+off
	off               int
	tooExpensive      int
	removed, inserted []bool
}

func newRangesDiffer(x, y []int) *rangesDiffer {
	diags := len(x) + len(y) + 3
	tooExpensive := 1
	for n := diags; n != 0; n >>= 2 {
		tooExpensive <<= 1
	}
	tooExpensive = max(tooExpensive, 4096)
	return &rangesDiffer{
		x: x, y: y,
		fd:           make([]int, diags),
		bd:           make([]int, diags),
		off:          len(y) + 1,
		tooExpensive: tooExpensive,
		removed:      make([]bool, len(x)),
		inserted:     make([]bool, len(y)),
	}
}

// compare marks the edits that turn x[xoff:xlim] into y[yoff:ylim].
func (r *rangesDiffer) compare(xoff, xlim, yoff, ylim int, minimal bool) {
	for {
		for xoff < xlim && yoff < ylim && r.x[xoff] == r.y[yoff] {
			xoff++
			yoff++
		}
		for xoff < xlim && yoff < ylim && r.x[xlim-1] == r.y[ylim-1] {
			xlim--
			ylim--
		}
		switch {
		case xoff == xlim:
			for ; yoff < ylim; yoff++ {
				r.inserted[yoff] = true
			}
			return
		case yoff == ylim:
			for ; xoff < xlim; xoff++ {
				r.removed[xoff] = true
			}
			return
		}
		xmid, ymid, loMinimal, hiMinimal := r.split(xoff, xlim, yoff, ylim, minimal)
		r.compare(xoff, xmid, yoff, ymid, loMinimal)
		// The upper half iteratively, to keep the recursion shallow.
		xoff, yoff, minimal = xmid, ymid, hiMinimal
	}
}

// split finds the middle of a shortest edit script between x[xoff:xlim] and
// y[yoff:ylim] (both non-empty, their first and last elements differing), or,
// when that costs more than tooExpensive steps and minimal is false, a point
// on the best path found so far.
func (r *rangesDiffer) split(xoff, xlim, yoff, ylim int, minimal bool) (xmid, ymid int, loMinimal, hiMinimal bool) {
	fd, bd, off := r.fd, r.bd, r.off
	dmin, dmax := xoff-ylim, xlim-yoff
	fmid, bmid := xoff-yoff, xlim-ylim
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	odd := (fmid-bmid)&1 != 0
	fd[fmid+off] = xoff
	bd[bmid+off] = xlim
	for c := 1; ; c++ {
		// One more edit step top-down on every diagonal in reach.
		if fmin > dmin {
			fmin--
			fd[fmin-1+off] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[fmax+1+off] = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			tlo, thi := fd[d-1+off], fd[d+1+off]
			x := tlo + 1
			if tlo < thi {
				x = thi
			}
			y := x - d
			for x < xlim && y < ylim && r.x[x] == r.y[y] {
				x++
				y++
			}
			fd[d+off] = x
			if odd && bmin <= d && d <= bmax && bd[d+off] <= x {
				return x, y, true, true
			}
		}
		// And bottom-up.
		if bmin > dmin {
			bmin--
			bd[bmin-1+off] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[bmax+1+off] = math.MaxInt
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			tlo, thi := bd[d-1+off], bd[d+1+off]
			x := thi - 1
			if tlo < thi {
				x = tlo
			}
			y := x - d
			for xoff < x && yoff < y && r.x[x-1] == r.y[y-1] {
				x--
				y--
			}
			bd[d+off] = x
			if !odd && fmin <= d && d <= fmax && x <= fd[d+off] {
				return x, y, true, true
			}
		}
		if minimal || c < r.tooExpensive {
			continue
		}
		// Too expensive: stop at the point, top-down or bottom-up, that got
		// furthest. Each half is then a smaller problem.
		fxybest, fxbest := -1, 0
		for d := fmax; d >= fmin; d -= 2 {
			x := min(fd[d+off], xlim)
			y := x - d
			if ylim < y {
				x, y = ylim+d, ylim
			}
			if fxybest < x+y {
				fxybest, fxbest = x+y, x
			}
		}
		bxybest, bxbest := math.MaxInt, 0
		for d := bmax; d >= bmin; d -= 2 {
			x := max(xoff, bd[d+off])
			y := x - d
			if y < yoff {
				x, y = yoff+d, yoff
			}
			if x+y < bxybest {
				bxybest, bxbest = x+y, x
			}
		}
		if (xlim+ylim)-bxybest < fxybest-(xoff+yoff) {
			return fxbest, fxybest - fxbest, true, false
		}
		return bxbest, bxybest - bxbest, false, true
	}
}
