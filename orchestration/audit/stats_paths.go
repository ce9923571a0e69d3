package audit

import "hash/maphash"

// pathTable numbers the paths one stats worker meets, 0, 1, 2... in the
// order it first sees them. It does what a map[string]int32 did, for the
// one lookup every file of every record makes, in less memory: a slot is
// one word (the path's number and 32 bits of its hash), and the bytes of
// all paths lie one after another in one array. On a 1M-record ledger the
// map was a tenth of the count's time, nearly all of it waiting for
// memory: the ledger streaming through the cache pushes out a table that
// is large and scattered.
//
// The hash is keyed with a seed chosen per table, so paths chosen to
// collide cannot make the table slow; a collision costs a comparison,
// never a wrong number (the bytes are compared).
type pathTable struct {
	seed  maphash.Seed
	slots []uint64 // hash<<32 | number+1; 0 empty. A power of two, at most half used.
	bytes []byte   // the paths, one after another
	ends  []int    // path n is bytes[ends[n]:ends[n+1]]; ends[0] = 0
	names []string // path number -> path
}

func newPathTable() pathTable {
	return pathTable{seed: maphash.MakeSeed(), slots: make([]uint64, 1024), ends: []int{0}}
}

// number is p's number, given it at its first sight.
func (t *pathTable) number(p []byte) int32 {
	h := maphash.Bytes(t.seed, p)
	tag := h &^ (1<<32 - 1)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return t.insert(i, tag, p)
		}
		if s&^(1<<32-1) == tag {
			n := int(uint32(s)) - 1
			if string(t.bytes[t.ends[n]:t.ends[n+1]]) == string(p) {
				return int32(n)
			}
		}
	}
}

// insert gives p, which is not in the table, the next number in the empty
// slot i.
func (t *pathTable) insert(i, tag uint64, p []byte) int32 {
	n := len(t.names)
	t.slots[i] = tag | uint64(n+1)
	t.bytes = append(t.bytes, p...)
	t.ends = append(t.ends, len(t.bytes))
	t.names = append(t.names, string(p))
	if 2*len(t.names) > len(t.slots) {
		t.grow()
	}
	return int32(n)
}

// grow doubles the slots, placing each path anew by its hash.
func (t *pathTable) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for n, name := range t.names {
		h := maphash.String(t.seed, name)
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h&^(1<<32-1) | uint64(n+1)
	}
}
