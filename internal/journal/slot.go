// Package journal is the on-disk form of a journal slot: one file per
// process in .orchestration/journal, rewritten in place for each change the
// process is about to make and marked done in place once the change's
// record is in the ledger. Creating and removing a file per change costs a
// new inode each time, which on some file systems grows with every file
// freed shortly before; a slot is created once.
//
// A slot holds a header line and the entry (JSON, the engine's
// JournalEntry) after it:
//
//	IGJ1 S LLLLLLLL <sha256 of the entry, hex>\n<entry>
//
// S is 'P' while the change is pending and 'D' once it is done; L is the
// entry's length in hex. Bytes after the entry are what a longer entry
// before it left, and mean nothing. The checksum lets a reader tell a slot
// torn by a crash in the middle of its rewrite (which was never synced, so
// its change never began) from a complete one.
package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// SlotSuffix ends a slot's file name.
const SlotSuffix = ".slot"

// StateOffset is where the state byte is: marking a slot done is one byte
// written there.
const StateOffset = 5

// Pending and Done are the state byte's two values.
const (
	Pending byte = 'P'
	Done    byte = 'D'
)

// MaxEntry bounds an entry's length: far above any entry the engine writes
// (a path is at most 4,096 bytes), so that a damaged length cannot make a
// reader allocate or read much.
const MaxEntry = 1 << 20

const (
	magic     = "IGJ1 "
	headerLen = len(magic) + 1 + 1 + 8 + 1 + 2*sha256.Size + 1
)

// State is what a slot's bytes say.
type State int

const (
	// Empty: nothing written yet (no bytes, or only zeros).
	Empty State = iota
	// Torn: not a complete slot (a crash in the middle of its rewrite, or
	// bytes that are no slot at all). Its change never began.
	Torn
	// InFlight: a complete entry whose change may have happened and whose
	// record may be missing.
	InFlight
	// Finished: the entry's change is recorded.
	Finished
)

// AppendSlot appends to dst the slot bytes of entry, pending. It panics if
// entry is longer than MaxEntry.
func AppendSlot(dst, entry []byte) []byte {
	if len(entry) > MaxEntry {
		panic("journal: entry too long")
	}
	sum := sha256.Sum256(entry)
	dst = append(dst, magic...)
	dst = append(dst, Pending, ' ')
	l := strconv.FormatUint(uint64(len(entry)), 16)
	for i := len(l); i < 8; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, l...)
	dst = append(dst, ' ')
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, '\n')
	return append(dst, entry...)
}

// ParseSlot reads a slot's bytes: the entry, for a pending slot, and its
// state. Anything that is not exactly a slot written by AppendSlot is Torn
// (or Empty), never InFlight.
func ParseSlot(b []byte) ([]byte, State) {
	if len(b) == 0 || allZero(b) {
		return nil, Empty
	}
	if len(b) < headerLen || string(b[:len(magic)]) != magic ||
		b[StateOffset+1] != ' ' || b[StateOffset+10] != ' ' || b[headerLen-1] != '\n' {
		return nil, Torn
	}
	state := b[StateOffset]
	if state == Done {
		return nil, Finished
	}
	if state != Pending {
		return nil, Torn
	}
	var n uint64
	for _, c := range b[StateOffset+2 : StateOffset+10] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return nil, Torn
		}
		n = n<<4 | uint64(d)
	}
	if n > MaxEntry || uint64(len(b)-headerLen) < n {
		return nil, Torn
	}
	entry := b[headerLen : headerLen+int(n)]
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], b[StateOffset+11:headerLen-1]); err != nil {
		return nil, Torn
	}
	// Only lowercase hex is written: another spelling of the same sum
	// is not what AppendSlot wrote.
	if bytes.ContainsFunc(b[StateOffset+11:headerLen-1], func(r rune) bool { return 'A' <= r && r <= 'F' }) {
		return nil, Torn
	}
	if sha256.Sum256(entry) != want {
		return nil, Torn
	}
	return entry, InFlight
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
