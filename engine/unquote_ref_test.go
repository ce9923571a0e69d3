package engine

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The byte-at-a-time decoder and scanner that unquote and stringEnd
// replaced, kept as references: the word-at-a-time versions must answer
// exactly as they did, on every input.

func unquoteRef(raw []byte) (s string, ok bool) {
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
				r, n := hex4Ref(body[i+2:])
				if n < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, n2 := lowSurrogateRef(body[i:]); n2 > 0 {
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
			for j < len(body) && plainASCIIRef[body[j]] {
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

var plainASCIIRef = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func lowSurrogateRef(p []byte) (rune, int) {
	if len(p) < 6 || p[0] != '\\' || p[1] != 'u' {
		return 0, -1
	}
	return hex4Ref(p[2:])
}
func hex4Ref(p []byte) (rune, int) {
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

var plainInStringRef = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func stringEndRef(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		for i < len(b) && plainInStringRef[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
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
		}
	}
	return 0, false
}

// FuzzStringEnd checks stringEnd against the reference scanner, at every
// start offset.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`""`, `"abcdefghijklmnop"`, `"abcdefg\"hijk"`, "\"abcdefgh\x1fij\"", `"\u00e9xxxxxxxxxx"`,
		`"\u00g9"`, `"xxxxxxxx\`, `"xxxxxxxxxxxxxxx\u12"`, "\"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\"", `"a\/b\bc\fd\ne\rf\tg\\h"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := 0; i <= len(b); i++ {
			gotEnd, gotOK := stringEnd(b, i)
			wantEnd, wantOK := stringEndRef(b, i)
			if gotEnd != wantEnd || gotOK != wantOK {
				t.Fatalf("stringEnd(%q, %d) = %d, %v; reference %d, %v", b, i, gotEnd, gotOK, wantEnd, wantOK)
			}
		}
	})
}

// randomJSONish returns a string literal, or something close to one, built
// from pieces that hit every branch of the scanners (escapes, control
// characters, quotes, multi-byte and invalid UTF-8, surrogates) at every
// offset within a word.
func randomJSONish(r *rand.Rand) []byte {
	pieces := []string{"a", "xyzxyzxyzxyz", " ", "~", "\x7f", `\"`, `\\`, `\/`, `\n`, `\t`, `\b`, `\f`, `\r`,
		`\u00e9`, `\u4E2D`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83d\u0041`, `\u12`, `\x`, `\`, `"`,
		"\x00", "\x1f", "\n", "é", "中", "😀", "\xff", "\xe2\x82", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}
	var b strings.Builder
	b.WriteByte('"')
	n := r.IntN(40)
	for range n {
		p := pieces[r.IntN(len(pieces))]
		if r.IntN(3) != 0 {
			p = pieces[r.IntN(4)] // mostly plain text, as real content is
		}
		b.WriteString(p)
	}
	if r.IntN(8) != 0 {
		b.WriteByte('"')
	}
	return []byte(b.String())
}

func TestStringEndMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := randomJSONish(r)
		if r.IntN(2) == 0 {
			b = append(b, `,"k":"v"}`...)
		}
		for _, i := range []int{0, 1, r.IntN(len(b) + 1)} {
			gotEnd, gotOK := stringEnd(b, i)
			wantEnd, wantOK := stringEndRef(b, i)
			if gotEnd != wantEnd || gotOK != wantOK {
				t.Fatalf("stringEnd(%q, %d) = %d, %v; reference %d, %v", b, i, gotEnd, gotOK, wantEnd, wantOK)
			}
		}
	}
}

func TestUnquoteMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		b := randomJSONish(r)
		got, gotOK := unquote(b)
		want, wantOK := unquoteRef(b)
		if got != want || gotOK != wantOK {
			t.Fatalf("unquote(%q) = %q, %v; reference %q, %v", b, got, gotOK, want, wantOK)
		}
		if !gotOK {
			continue
		}
		var std string
		if err := json.Unmarshal(b, &std); err != nil || std != got {
			t.Fatalf("unquote(%q) = %q; encoding/json %q, %v", b, got, std, err)
		}
	}
}

// A 64 KiB content with an escape on every line, the shape of a file
// written through a front door.
func BenchmarkUnquoteContent(b *testing.B) {
	line := strings.Repeat("y", 63) + `\n`
	raw := []byte(`"` + strings.Repeat(line, 1024) + `"`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, ok := unquote(raw); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkStringEndContent(b *testing.B) {
	line := strings.Repeat("y", 63) + `\n`
	raw := []byte(`"` + strings.Repeat(line, 1024) + `"`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, ok := stringEnd(raw, 0); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkUnquoteContentReference(b *testing.B) {
	line := strings.Repeat("y", 63) + `\n`
	raw := []byte(`"` + strings.Repeat(line, 1024) + `"`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		unquoteRef(raw)
	}
}

func BenchmarkStringEndContentReference(b *testing.B) {
	line := strings.Repeat("y", 63) + `\n`
	raw := []byte(`"` + strings.Repeat(line, 1024) + `"`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		stringEndRef(raw, 0)
	}
}
