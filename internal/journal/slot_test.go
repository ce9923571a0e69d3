package journal

import (
	"bytes"
	"strings"
	"testing"
)

func TestSlotRoundTrip(t *testing.T) {
	entry := []byte(`{"path":"src/a.go","after_sha256":"x"}`)
	b := AppendSlot(nil, entry)
	// The header, spelled out by hand: magic, state, length 0x26 = 38,
	// and sha256 of the entry (sha256sum of the same bytes).
	const want = "IGJ1 P 00000026 70f90d7bfe6b30db54bad94ce09858c237aa32ed9bb83019fe3a43a737d09229\n"
	if string(b[:headerLen]) != want {
		t.Fatalf("AppendSlot header = %q, want prefix %q", b[:headerLen], want)
	}
	got, st := ParseSlot(b)
	if st != InFlight || !bytes.Equal(got, entry) {
		t.Fatalf("ParseSlot = %q, %v; want the entry, InFlight", got, st)
	}
	// A longer entry before it leaves its tail behind: ignored.
	long := AppendSlot(nil, bytes.Repeat([]byte("y"), 500))
	over := append([]byte(nil), long...)
	copy(over, b)
	if got, st := ParseSlot(over); st != InFlight || !bytes.Equal(got, entry) {
		t.Fatalf("ParseSlot over a longer slot = %q, %v", got, st)
	}
	// Marked done in place.
	b[StateOffset] = Done
	if _, st := ParseSlot(b); st != Finished {
		t.Fatalf("done slot: %v, want Finished", st)
	}
}

func TestSlotTorn(t *testing.T) {
	entry := []byte(`{"path":"a"}`)
	good := AppendSlot(nil, entry)
	other := AppendSlot(nil, []byte(`{"path":"b"}`))
	cases := map[string][]byte{
		"cut in the header":   good[:headerLen-3],
		"cut in the entry":    good[:len(good)-1],
		"a byte flipped":      flip(good, len(good)-2),
		"header of another":   append(other[:headerLen:headerLen], good[headerLen:]...),
		"entry of another":    append(good[:headerLen:headerLen], other[headerLen:]...),
		"unknown state":       set(good, StateOffset, 'X'),
		"uppercase sum":       []byte(strings.ToUpper(string(good[:headerLen])) + string(good[headerLen:])),
		"length not hex":      set(good, StateOffset+2, 'g'),
		"length past the end": set(good, StateOffset+2, 'f'),
		"zeros then garbage":  append(make([]byte, 100), 1),
		"json alone":          entry,
		"bad magic":           set(good, 0, 'X'),
	}
	for name, b := range cases {
		if got, st := ParseSlot(b); st != Torn {
			t.Errorf("%s: ParseSlot = %q, %v; want Torn", name, got, st)
		}
	}
	for _, b := range [][]byte{nil, make([]byte, 4096)} {
		if _, st := ParseSlot(b); st != Empty {
			t.Errorf("ParseSlot(%d zero bytes) = %v, want Empty", len(b), st)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 1
	return c
}

func set(b []byte, i int, v byte) []byte {
	c := append([]byte(nil), b...)
	c[i] = v
	return c
}
