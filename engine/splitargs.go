package engine

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// splitArgs splits a call's arguments, a JSON object, into its members in
// one pass over the bytes, without copying the values (they alias raw):
// encoding/json would scan a 64 KiB content argument twice and copy it.
// It takes only objects whose values are strings (the shape of nearly
// every tool call, and of every large one); ok is false for anything else,
// and the caller falls back to encoding/json, which also reports the
// errors. A later duplicate key wins, as with encoding/json.
func splitArgs(raw []byte) (args map[string]json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	args = map[string]json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return args, skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, ok := stringEnd(raw, i)
		if !ok {
			return nil, false
		}
		key, ok := unquote(raw[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end, ok = stringEnd(raw, i)
		if !ok {
			return nil, false
		}
		args[key] = json.RawMessage(raw[i:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return args, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainInString marks the bytes a JSON string literal holds as they are:
// all but '"', '\\' and the control characters.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Eight bytes at a time: each byte of a word is tested at once with the
// usual carry tricks. (x - ones*k) &^ x has the high bit of a byte set when
// that byte is below k, (y - ones) &^ y when that byte of y is zero;
// borrows only run upwards from a byte that is itself caught, so the lowest
// flagged byte is always a real match.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialBits flags, in the high bit of each byte of x, the bytes a JSON
// string literal does not hold as they are: '"', '\\' and the control
// characters.
func specialBits(x uint64) uint64 {
	q := x ^ (ones * '"')
	s := x ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s | (x-ones*0x20)&^x) & highs
}

// nextSpecial returns the offset of the first byte of b at or after i that
// a JSON string literal does not hold as it is, or len(b).
func nextSpecial(b []byte, i int) int {
	for ; i+16 <= len(b); i += 16 {
		m0 := specialBits(binary.LittleEndian.Uint64(b[i:]))
		m1 := specialBits(binary.LittleEndian.Uint64(b[i+8:]))
		if m0|m1 != 0 {
			if m0 != 0 {
				return i + bits.TrailingZeros64(m0)/8
			}
			return i + 8 + bits.TrailingZeros64(m1)/8
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if m := specialBits(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && plainInString[b[i]] {
		i++
	}
	return i
}

// stringEnd returns the offset just past the JSON string literal starting
// at b[i], checking what encoding/json checks: no control characters, only
// known escapes, four hex digits after \u (UTF-8 is not checked: encoding/json
// takes invalid bytes and decodes them to U+FFFD).
func stringEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; ; {
		i = nextSpecial(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		}
		// A backslash.
		i++
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(b) {
				return 0, false
			}
			for _, h := range b[i+1 : i+5] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return 0, false
				}
			}
			i += 4
		default:
			return 0, false
		}
		i++
	}
}
