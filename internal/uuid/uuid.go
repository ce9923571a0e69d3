// Package uuid is the part of UUIDs (RFC 9562) the ledger needs: version 7
// identifiers for new records, and parsing of the text forms a record's id
// may take. It accepts exactly the forms github.com/google/uuid's Parse
// accepts (FuzzParseLikeGoogle holds it to that), but links no network
// package: google/uuid imports net for version 1 node IDs, and net makes
// every program that links it a cgo, dynamically linked executable, which
// costs a hook process a fifth of its start.
package uuid

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// UUID is a UUID's 16 bytes.
type UUID [16]byte

// String is the 36-character text form, in lower case.
func (u UUID) String() string {
	const hexdigits = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexdigits[c>>4], hexdigits[c&0xf]
		j += 2
	}
	return string(b[:])
}

var errFormat = errors.New("invalid UUID format")

// Parse reads a UUID in one of the forms xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx,
// urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (prefix in any case),
// {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx} and 32 hexadecimal digits; the
// digits in either case. As google/uuid's, it does not look at the braces'
// characters, only at their places.
func Parse(s string) (UUID, error) {
	var u UUID
	switch len(s) {
	case 36:
	case 45:
		if !strings.EqualFold(s[:9], "urn:uuid:") {
			return u, fmt.Errorf("invalid urn prefix: %q", s[:9])
		}
		s = s[9:]
	case 38:
		s = s[1:37]
	case 32:
		for i := range u {
			b, ok := hexByte(s[2*i], s[2*i+1])
			if !ok {
				return UUID{}, errFormat
			}
			u[i] = b
		}
		return u, nil
	default:
		return u, fmt.Errorf("invalid UUID length: %d", len(s))
	}
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, errFormat
	}
	j := 0
	for i := range u {
		if j == 8 || j == 13 || j == 18 || j == 23 {
			j++
		}
		b, ok := hexByte(s[j], s[j+1])
		if !ok {
			return UUID{}, errFormat
		}
		u[i] = b
		j += 2
	}
	return u, nil
}

func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexVal(hi)
	l, ok2 := hexVal(lo)
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

var (
	v7mu   sync.Mutex
	v7last int64 // the last (millisecond<<12 | sequence) handed out
)

// NewV7 returns a version 7 UUID: the Unix time in milliseconds (48 bits),
// the version, 12 bits that count within the millisecond (the time's
// fraction in steps of 256 ns, raised where needed so that the UUIDs one
// process makes are strictly increasing), the variant, and 62 random bits.
func NewV7() (UUID, error) {
	var u UUID
	if _, err := rand.Read(u[:]); err != nil {
		return u, err
	}
	v7mu.Lock()
	nano := time.Now().UnixNano()
	ms := nano / 1e6
	now := ms<<12 | (nano-ms*1e6)>>8
	if now <= v7last {
		now = v7last + 1
	}
	v7last = now
	v7mu.Unlock()
	ms, seq := now>>12, now&0xfff
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = 0x70 | byte(seq>>8)&0x0f
	u[7] = byte(seq)
	u[8] = u[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	return u, nil
}
