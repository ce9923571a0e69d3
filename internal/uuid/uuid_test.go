package uuid

import (
	"strings"
	"testing"
	"time"

	google "github.com/google/uuid"
)

// FuzzParseLikeGoogle: Parse accepts what google/uuid's Parse accepts, with
// the same bytes, and refuses what it refuses. The ledger's duplicate check
// compares parsed ids, so a form read differently would change its verdicts.
func FuzzParseLikeGoogle(f *testing.F) {
	for _, s := range []string{
		"0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"0190F3C4-9A4E-7D3B-8C2A-1B2C3D4E5F60",
		"urn:uuid:0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"URN:UUID:0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"{0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60}",
		"x0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60y",
		"0190f3c49a4e7d3b8c2a1b2c3d4e5f60",
		"0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f6g",
		"0190f3c4_9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f6",
		"urn:uuix:0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"", "-", strings.Repeat("-", 36), strings.Repeat("f", 32),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		want, werr := google.Parse(s)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Parse(%q) error %v, google/uuid's %v", s, err, werr)
		}
		if err == nil && got != UUID(want) {
			t.Fatalf("Parse(%q) = %x, google/uuid's %x", s, got, want)
		}
		if err == nil && got.String() != want.String() {
			t.Fatalf("String() = %s, google/uuid's %s", got, want)
		}
	})
}

func TestParseForms(t *testing.T) {
	want := UUID{0x01, 0x90, 0xf3, 0xc4, 0x9a, 0x4e, 0x7d, 0x3b, 0x8c, 0x2a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60}
	for _, s := range []string{
		"0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"0190F3C4-9A4E-7D3B-8C2A-1B2C3D4E5F60",
		"urn:uuid:0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"Urn:Uuid:0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"{0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60}",
		"0190f3c49a4e7d3b8c2a1b2c3d4e5f60",
	} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %x, %v, want %x", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", "0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f6",
		"0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f6z",
		"0190f3c4+9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"urn:uuid+0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60",
		"0190f3c49a4e7d3b8c2a1b2c3d4e5f6 ",
	} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %x, want an error", s, got)
		}
	}
	if s := want.String(); s != "0190f3c4-9a4e-7d3b-8c2a-1b2c3d4e5f60" {
		t.Errorf("String() = %s", s)
	}
}

// TestNewV7: the version and variant bits are those of RFC 9562, the first
// 48 bits are the time in milliseconds, and one process's ids increase.
func TestNewV7(t *testing.T) {
	before := time.Now().UnixMilli()
	var prev UUID
	seen := map[UUID]bool{}
	for i := 0; i < 10000; i++ {
		u, err := NewV7()
		if err != nil {
			t.Fatal(err)
		}
		if u[6]>>4 != 7 || u[8]>>6 != 2 {
			t.Fatalf("%s: version %d, variant bits %b, want 7 and 10", u, u[6]>>4, u[8]>>6)
		}
		g, err := google.Parse(u.String())
		if err != nil || g.Version() != 7 || g.Variant() != google.RFC4122 {
			t.Fatalf("google/uuid reads %s as version %v, variant %v, %v", u, g.Version(), g.Variant(), err)
		}
		var ms int64
		for _, b := range u[:6] {
			ms = ms<<8 | int64(b)
		}
		// The counter may run ahead of the clock by a few ms when
		// more than 4,096 ids are made in one millisecond.
		if after := time.Now().UnixMilli(); ms < before || ms > after+10 {
			t.Fatalf("%s: time %d ms, made between %d and %d", u, ms, before, after)
		}
		if i > 0 && strings.Compare(u.String()[:18], prev.String()[:18]) <= 0 {
			t.Fatalf("%s does not follow %s", u, prev)
		}
		if seen[u] {
			t.Fatalf("%s made twice", u)
		}
		seen[u] = true
		prev = u
	}
}
