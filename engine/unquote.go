package engine

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// unquote decodes the JSON string literal raw the way encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD), in one pass and one
// allocation: a tool's content argument is the largest thing in a call, and
// encoding/json would scan it twice more. ok is false for anything that is
// not a well-formed JSON string; the caller then falls back to
// encoding/json, which reports the error.
func unquote(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	i := nextNotPlain(body, 0)
	if i == len(body) {
		return string(body), true // nothing to decode: one copy
	}
	var b strings.Builder
	b.Grow(len(body))
	for {
		// body[:i] is decoded; body[i] is an escape, a quote, a control
		// character or the start of a non-ASCII sequence.
		b.Write(body[:i])
		body = body[i:]
		if len(body) == 0 {
			return b.String(), true
		}
		switch c := body[0]; {
		case c == '"' || c < 0x20:
			return "", false
		case c == '\\':
			if len(body) < 2 {
				return "", false
			}
			n := 2
			switch body[1] {
			case '"', '\\', '/':
				b.WriteByte(body[1])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(body[2:])
				if !ok {
					return "", false
				}
				n = 6
				if utf16.IsSurrogate(r) {
					r2, ok := lowSurrogate(body[6:])
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r, n = dec, 12
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default:
				return "", false
			}
			body = body[n:]
		default:
			// Non-ASCII: a run of valid UTF-8 is copied as it is, an
			// invalid byte becomes U+FFFD.
			j := 0
			for j < len(body) && body[j] >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(body[j:])
				if r == utf8.RuneError && size == 1 {
					break
				}
				j += size
			}
			if j == 0 {
				b.WriteRune(utf8.RuneError)
				j = 1
			} else {
				b.Write(body[:j])
			}
			body = body[j:]
		}
		i = nextNotPlain(body, 0)
	}
}

// nextNotPlain returns the offset of the first byte of b at or after i that
// does not decode to itself ('"', '\\', a control character or a byte of a
// non-ASCII sequence), or len(b); eight bytes at a time (specialBits).
func nextNotPlain(b []byte, i int) int {
	for ; i+16 <= len(b); i += 16 {
		x0 := binary.LittleEndian.Uint64(b[i:])
		x1 := binary.LittleEndian.Uint64(b[i+8:])
		m0 := specialBits(x0) | x0&highs
		m1 := specialBits(x1) | x1&highs
		if m0|m1 != 0 {
			if m0 != 0 {
				return i + bits.TrailingZeros64(m0)/8
			}
			return i + 8 + bits.TrailingZeros64(m1)/8
		}
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := specialBits(x) | x&highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && plainASCII[b[i]] {
		i++
	}
	return i
}

// plainASCII marks the bytes a JSON string holds as they are and that
// decode to themselves: ASCII from space on, but for '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// lowSurrogate reads a \uXXXX escape at the start of p.
func lowSurrogate(p []byte) (rune, bool) {
	if len(p) < 6 || p[0] != '\\' || p[1] != 'u' {
		return 0, false
	}
	return hex4(p[2:])
}

// hex4 reads four hex digits.
func hex4(p []byte) (rune, bool) {
	if len(p) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
