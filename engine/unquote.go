package engine

import (
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
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c < 0x20:
			return "", false
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			switch body[i+1] {
			case '"', '\\', '/':
				b.WriteByte(body[i+1])
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
				r, n := hex4(body[i+2:])
				if n < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, n2 := lowSurrogate(body[i:]); n2 > 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied at once.
			j := i + 1
			for j < len(body) && plainASCII[body[j]] {
				j++
			}
			b.Write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(body[i : i+size])
			}
			i += size
		}
	}
	return b.String(), true
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
func lowSurrogate(p []byte) (rune, int) {
	if len(p) < 6 || p[0] != '\\' || p[1] != 'u' {
		return 0, -1
	}
	return hex4(p[2:])
}

// hex4 reads four hex digits.
func hex4(p []byte) (rune, int) {
	if len(p) < 4 {
		return 0, -1
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
			return 0, -1
		}
		r = r<<4 | rune(c)
	}
	return r, 4
}
