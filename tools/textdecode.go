package tools

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// sniffLen is how much of a file decides whether it is text, as in the
// isbinaryfile package Roo Code uses; a NUL is looked for further on.
const sniffLen = 512

// IsBinary judges b by its content, the way Roo Code's isbinaryfile does:
// a byte-order mark means text (UTF-8, UTF-16 and UTF-32 alike); "%PDF-"
// means binary; otherwise a NUL, or more than 10% control bytes in the first
// 512. Unlike isbinaryfile, bytes of 0x80 and above never count against a
// file: they are how Latin-1 and Windows-1252 spell accents, so a short
// French note in Latin-1 is text, not binary.
func IsBinary(b []byte) bool {
	if len(b) == 0 || bomEncoding(b) != nil || bytes.HasPrefix(b, utf8BOM) {
		return false
	}
	if bytes.HasPrefix(b, []byte("%PDF-")) {
		return true
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return true
	}
	head := b[:min(len(b), sniffLen)]
	suspicious := 0
	for _, c := range head {
		if c < 32 && (c < 7 || c > 14) && c != 27 || c == 127 {
			suspicious++
		}
	}
	return suspicious*100 > len(head)*10
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// bomEncoding returns the UTF-16 or UTF-32 decoder a byte-order mark
// announces, or nil.
func bomEncoding(b []byte) encoding.Encoding {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}):
		return utf32.UTF32(utf32.LittleEndian, utf32.ExpectBOM)
	case bytes.HasPrefix(b, []byte{0, 0, 0xFE, 0xFF}):
		return utf32.UTF32(utf32.BigEndian, utf32.ExpectBOM)
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	}
	return nil
}

// DecodeText returns a text file's content as UTF-8 and the name of the
// encoding it was read in: a BOM's UTF-16 or UTF-32, UTF-8, or, for bytes
// that are not valid UTF-8, Windows-1252 (the superset of Latin-1 that
// editors save as "Latin-1"), so that "café" is not shown as "caf\ufffd".
func DecodeText(b []byte) (string, string) {
	if enc := bomEncoding(b); enc != nil {
		if s, err := enc.NewDecoder().Bytes(b); err == nil {
			name := "UTF-16"
			if len(b) >= 4 && (b[2] == 0 && b[3] == 0 && b[0] == 0xFF || b[0] == 0 && b[1] == 0) {
				name = "UTF-32"
			}
			return string(s), name
		}
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	if utf8.Valid(b) {
		return string(b), "UTF-8"
	}
	s, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), "UTF-8"
	}
	return string(s), "Windows-1252"
}
