package journal

import (
	"bytes"
	"testing"
)

// FuzzParseSlot: whatever the bytes, ParseSlot does not panic, and an entry
// it calls in flight is exactly what AppendSlot wrote at the start of them.
func FuzzParseSlot(f *testing.F) {
	f.Add(AppendSlot(nil, []byte(`{"path":"a.txt","pid":1}`)))
	f.Add(AppendSlot(nil, nil))
	f.Add([]byte("IGJ1 D 00000000 "))
	f.Add([]byte("IGJ1 P ffffffff 0000\n"))
	f.Add(make([]byte, 90))
	f.Fuzz(func(t *testing.T, b []byte) {
		entry, st := ParseSlot(b)
		switch st {
		case InFlight:
			want := AppendSlot(nil, entry)
			if !bytes.HasPrefix(b, want) {
				t.Fatalf("ParseSlot(%q) = %q in flight, but AppendSlot gives %q", b, entry, want)
			}
		case Empty, Torn, Finished:
			if entry != nil {
				t.Fatalf("ParseSlot(%q) = %q with state %v", b, entry, st)
			}
		default:
			t.Fatalf("ParseSlot(%q): state %v", b, st)
		}
		// A slot made of any entry parses back to it.
		if len(b) <= MaxEntry {
			got, st := ParseSlot(AppendSlot(nil, b))
			if st != InFlight || !bytes.Equal(got, b) {
				t.Fatalf("round trip of %q: %q, %v", b, got, st)
			}
		}
	})
}
