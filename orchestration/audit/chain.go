package audit

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/intentgate/intentgate/orchestration"
)

// chainLine is what the chain check needs of one ledger line, as a verify
// worker found it.
type chainLine struct {
	sum   [32]byte // SHA-256 of the line without its newline
	prev  [32]byte // the link prev holds, when flags has chainLinked
	id    [16]byte // when flags has chainID
	flags uint8
}

const (
	chainParsed    = 1 << iota // the line is a record
	chainID                    // its id is a UUID
	chainMeta                  // it has dev.intentgate metadata
	chainPrevEmpty             // its prev is ""
	chainLinked                // its prev is a sha256 link (in prev)
	chainSeed                  // the record is in the seed shape
)

// chainBlock is how many lines' hashes and ids one block of the chain's
// storage holds: growing by blocks never copies what is kept.
const chainBlock = 1 << 16

// fastChain is orchestration.ChainVerifier for verify's chunked reader: the
// same report for the same lines (TestFastChainMatchesChainVerifier), in less
// memory and less time. It keeps every line's hash and id once (48 bytes a
// line, in blocks) and an open-addressing table of line numbers by id; the
// links are checked as lines come, against the line before, and only the
// rare link to another line (a fork, a reorder, a broken link) waits for the
// end, where one pass over the hashes resolves all of them.
type fastChain struct {
	rep     orchestration.ChainReport
	sums    [][][32]byte // blocks
	ids     [][][16]byte
	idTab   []uint32 // line numbers by id, 0 empty; len a power of two
	idN     int
	named   []bool // named[i]: line i+1 is some record's prev
	waiting []chainWait
	last    [32]byte // the hash of the line before
}

type chainWait struct {
	line int
	prev [32]byte
}

func newFastChain() *fastChain {
	return &fastChain{idTab: make([]uint32, 1<<16)}
}

// LineSum is the hash of line n (1-based).
func (v *fastChain) LineSum(n int) [32]byte {
	return v.sums[(n-1)/chainBlock][(n-1)%chainBlock]
}

func (v *fastChain) lineID(n int) [16]byte {
	return v.ids[(n-1)/chainBlock][(n-1)%chainBlock]
}

func (v *fastChain) keep(i int, sum [32]byte, id [16]byte) {
	if (i-1)%chainBlock == 0 {
		v.sums = append(v.sums, make([][32]byte, 0, chainBlock))
		v.ids = append(v.ids, make([][16]byte, 0, chainBlock))
	}
	b := len(v.sums) - 1
	v.sums[b] = append(v.sums[b], sum)
	v.ids[b] = append(v.ids[b], id)
}

func idSlot(id [16]byte, mask uint32) uint32 {
	h := binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:])
	h *= 0x9e3779b97f4a7c15
	return uint32(h>>32) & mask
}

// firstWithID returns the line already holding id, or 0, and the slot
// where id would go.
func (v *fastChain) firstWithID(id [16]byte) (int, uint32) {
	mask := uint32(len(v.idTab) - 1)
	for s := idSlot(id, mask); ; s = (s + 1) & mask {
		l := v.idTab[s]
		if l == 0 {
			return 0, s
		}
		if v.lineID(int(l)) == id {
			return int(l), s
		}
	}
}

func (v *fastChain) noteID(line int, slot uint32) {
	v.idTab[slot] = uint32(line)
	v.idN++
	if v.idN*2 <= len(v.idTab) {
		return
	}
	old := v.idTab
	v.idTab = make([]uint32, 2*len(old))
	mask := uint32(len(v.idTab) - 1)
	for _, l := range old {
		if l == 0 {
			continue
		}
		s := idSlot(v.lineID(int(l)), mask)
		for v.idTab[s] != 0 {
			s = (s + 1) & mask
		}
		v.idTab[s] = l
	}
}

// torn notes a last line of n bytes without its newline.
func (v *fastChain) torn(n int) { v.rep.TornTail = n }

// add takes the next complete line, raw (its bytes without the newline).
// parseErr says why a line that is not a record is not; badPrev is the prev
// of a record whose prev is no link.
func (v *fastChain) add(l *chainLine, raw []byte, parseErr, badPrev string) {
	rep := &v.rep
	rep.Lines++
	i := rep.Lines
	v.named = append(v.named, false)
	last := v.last
	v.last = l.sum
	var id [16]byte
	if l.flags&(chainParsed|chainID) == chainParsed|chainID {
		id = l.id
	}
	v.keep(i, l.sum, id)
	if l.flags&chainParsed == 0 {
		v.problem(i, orchestration.ChainUnparsable, parseErr)
		return
	}
	rep.Records++
	if l.flags&chainID != 0 {
		if j, slot := v.firstWithID(l.id); j != 0 {
			v.problem(i, orchestration.ChainDuplicate, fmt.Sprintf("record %s is also line %d", recordID(raw, l.id), j))
		} else {
			v.noteID(i, slot)
		}
	}
	switch {
	case l.flags&chainMeta == 0:
		v.problem(i, orchestration.ChainUnlinked, "no "+orchestration.MetaKey+" metadata")
	case l.flags&chainPrevEmpty != 0:
		if i > 1 {
			rep.Forks = append(rep.Forks, orchestration.ChainFork{Line: i, Parent: 0})
		}
	case l.flags&chainLinked == 0:
		v.problem(i, orchestration.ChainBroken, fmt.Sprintf("prev %q is not a sha256 link", badPrev))
	case i > 1 && l.prev == last:
		v.named[i-2] = true
	default:
		v.waiting = append(v.waiting, chainWait{line: i, prev: l.prev})
	}
}

func (v *fastChain) problem(line int, fault orchestration.ChainFault, detail string) {
	v.rep.Problems = append(v.rep.Problems, orchestration.ChainProblem{Line: line, Fault: fault, Detail: detail})
}

// report finishes the check; call it once, after the last add.
func (v *fastChain) report() *orchestration.ChainReport {
	rep := &v.rep
	if len(v.waiting) > 0 {
		// The first line with each hash a waiting link names.
		first := make(map[[32]byte]int, len(v.waiting))
		for _, w := range v.waiting {
			first[w.prev] = 0
		}
		n := 0
		for _, blk := range v.sums {
			for _, s := range blk {
				n++
				if j, ok := first[s]; ok && j == 0 {
					first[s] = n
				}
			}
		}
		for _, w := range v.waiting {
			switch j := first[w.prev]; {
			case j != 0 && j < w.line:
				v.named[j-1] = true
				rep.Forks = append(rep.Forks, orchestration.ChainFork{Line: w.line, Parent: j})
			case j != 0:
				v.named[j-1] = true
				v.problem(w.line, orchestration.ChainReordered, fmt.Sprintf("prev names line %d, which comes after it", j))
			case w.line == 1:
				v.problem(w.line, orchestration.ChainBroken, "the first record's prev is not empty: lines before it were removed")
			default:
				v.problem(w.line, orchestration.ChainBroken, fmt.Sprintf("prev names no line of the ledger: line %d was edited or lines after it deleted, or line %d was inserted", w.line-1, w.line))
			}
		}
		v.waiting = nil
		sort.SliceStable(rep.Forks, func(a, b int) bool { return rep.Forks[a].Line < rep.Forks[b].Line })
	}
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

// parseLink reads a chain link, "sha256:" and 64 hex digits.
func parseLink(p []byte, sum *[32]byte) bool {
	const pre = orchestration.HashPrefix
	if len(p) != len(pre)+64 || string(p[:len(pre)]) != pre {
		return false
	}
	_, err := hex.Decode(sum[:], p[len(pre):])
	return err == nil
}

// recordID is the id of the record on a line as the line spells it (the
// rare duplicate's message names it so).
func recordID(raw []byte, id [16]byte) string {
	if rec, ok := orchestration.ParseCanonical(raw); ok {
		return rec.ID
	}
	if rec, err := orchestration.ParseRecord(raw); err == nil {
		return rec.ID
	}
	return uuidString(id)
}

// uuidString is the text form of a UUID, as uuid.UUID.String writes it.
func uuidString(id [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return string(b[:])
}
