package orchestration

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// strByBytes is what str reads at the start of b, found a byte at a time
// with no word tricks: the string's bytes and how far it reaches, or
// ok false.
func strByBytes(b []byte) (s []byte, end int, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, 0, false
	}
	for i := 1; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return b[1:i], i + 1, true
		case c < 0x20 || c == '\\':
			return nil, 0, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return nil, 0, false
			}
			i += n
		}
	}
	return nil, 0, false
}

// FuzzPlainBytes holds plainBytes (eight bytes a word) to plainBytesSlow
// (a byte at a time) on every piece of the input: every start in the
// first 17 bytes and every length, so that the special byte falls on each
// place of a word, in the last, overlapping word, and in pieces of every
// length, shorter than a word included.
func FuzzPlainBytes(f *testing.F) {
	f.Add([]byte(`0123456789abcdef0123456789abcdef"`))
	f.Add([]byte("sha256:0123456789abcdef\\0123456789abcdef"))
	f.Add([]byte("abcdefgh\x1fijklmnop\x7f\x80\xff"))
	f.Add(bytes.Repeat([]byte{' '}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 300 {
			b = b[:300]
		}
		for from := 0; from < 17 && from <= len(b); from++ {
			for to := from; to <= len(b); to++ {
				s := b[from:to]
				if got, want := plainBytes(s), plainBytesSlow(s); got != want {
					t.Fatalf("plainBytes(%q) = %v, byte by byte %v", s, got, want)
				}
			}
		}
	})
}

// FuzzCanonStr holds the string readers to strByBytes on any input: str
// (eight bytes a word until a special one), and strN for every length it
// may be told, right or wrong.
func FuzzCanonStr(f *testing.F) {
	f.Add([]byte(`"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","x"`))
	f.Add([]byte(`"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`))
	f.Add([]byte(`"01a20e87-ce93-7c50-b0d0-56c1ea62d823"`))
	f.Add([]byte("\"abc\xe2\x80\xa8def\""))
	f.Add([]byte("\"abcdefg\\\"hijklmn\""))
	f.Add([]byte("\"abcdefgh\x00\""))
	f.Add([]byte("\"\xc3\xa9t\xc3\xa9\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 300 {
			b = b[:300]
		}
		s, end, ok := strByBytes(b)
		check := func(name string, got []byte, p *canonParser) {
			t.Helper()
			if p.ok != ok || ok && (p.i != end || !bytes.Equal(got, s)) || ok && got == nil {
				t.Fatalf("%s of %q: %q, ok %v, at %d; byte by byte %q, ok %v, at %d", name, b, got, p.ok, p.i, s, ok, end)
			}
		}
		p := canonParser{b: b, ok: true}
		check("str", p.str(), &p)
		for n := 0; n <= len(b)+1; n++ {
			p := canonParser{b: b, ok: true}
			check("strN", p.strN(n), &p)
		}
	})
}

// TestCanonFixedStringsEveryByte puts every byte value at every place of
// the strings strN reads by their usual length (the id, the revision, a
// range's hash, the before and after hashes, prev), and lengthens and
// shortens each by one: the fast reader reads the line exactly when
// ParseRecord reads it and the writer writes it back, as for any string.
func TestCanonFixedStringsEveryByte(t *testing.T) {
	var line []byte
	for _, l := range benchLedgerLines(t, 40) {
		if bytes.Contains(l, []byte(`"before_sha256"`)) {
			line = l
			break
		}
	}
	if line == nil {
		t.Fatal("no change among the bench lines")
	}
	for _, key := range []string{"id", "revision", "content_hash", "before_sha256", "after_sha256", "prev"} {
		k := []byte(`"` + key + `":"`)
		at := bytes.Index(line, k)
		if at < 0 {
			t.Fatalf("no %s in %s", key, line)
		}
		from := at + len(k)
		to := from + bytes.IndexByte(line[from:], '"')
		val := line[from:to]
		with := func(v []byte) []byte {
			return append(append(append([]byte{}, line[:from]...), v...), line[to:]...)
		}
		if !checkCanonical(t, line) {
			t.Fatalf("the line is not read fast: %s", line)
		}
		for pos := range val {
			for c := 0; c < 256; c++ {
				v := append([]byte{}, val...)
				v[pos] = byte(c)
				got := checkCanonical(t, with(v))
				if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && key != "id" && !got {
					t.Fatalf("%s with %#x at %d: not read fast", key, c, pos)
				}
				if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') && got {
					t.Fatalf("%s with %#x at %d: read fast", key, c, pos)
				}
			}
		}
		// One byte more and one less: read as any string.
		checkCanonical(t, with(append(append([]byte{}, val...), 'a')))
		checkCanonical(t, with(val[:len(val)-1]))
	}
}
