package snap

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// FingerprintsFrom gives exactly the fingerprints of hashing every line of
// after, whatever before was: edits at the start, the end, the middle,
// several places, line endings changed, no final newline, lines repeated
// so that the common beginning and end overlap.
func TestFingerprintsFromMatchesHashingEveryLine(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"", "a\n"}, {"a\n", ""}, {"a\n", "a\n"}, {"a", "a"}, {"a", "a\n"},
		{"a\nb\nc\n", "a\nB\nc\n"}, {"a\nb\nc", "x\nb\nc"}, {"a\nb\nc\n", "a\nb\nc\nd"},
		{"a\r\nb\r\n", "a\nb\n"}, {"a\r\nb\r\n", "a\r\nb\n"}, {"x\nabc", "y\nabc"},
		{"a\na\na\n", "a\na\n"}, {"a\na\n", "a\na\na\n"}, {"ab\n", "abab\n"}, {"\n\n", "\n\n\n"},
		{"abc\ndef\n", "abc\nxdef\n"}, {"abc\ndef\n", "abcx\ndef\n"}, {"q\r", "q\r\n"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "\n", "\r\n", "\r", "line", "", "}"}
	gen := func() string {
		var sb strings.Builder
		for range r.IntN(30) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	for range 3000 {
		b := gen()
		// after: before with a random slice replaced, or unrelated.
		a := gen()
		if r.IntN(4) > 0 && len(b) > 0 {
			i := r.IntN(len(b) + 1)
			j := i + r.IntN(len(b)-i+1)
			a = b[:i] + gen() + b[j:]
		}
		cases = append(cases, [2]string{b, a})
	}
	for _, c := range cases {
		before, after := []byte(c[0]), []byte(c[1])
		want := Fingerprints(orchestration.SplitLines(after))
		fps := Fingerprints(orchestration.SplitLines(before))
		got := FingerprintsFrom(before, fps, after)
		if !slices.Equal(got, want) {
			t.Fatalf("before %q, after %q:\ngot  %x\nwant %x", before, after, got, want)
		}
		// Fingerprints that are not before's, one line short or one
		// too many, are not used.
		for _, wrong := range [][]uint64{fps[:max(len(fps)-1, 0)], append(fps[:len(fps):len(fps)], 1)} {
			if len(wrong) == len(fps) {
				continue
			}
			if got := FingerprintsFrom(before, wrong, after); !slices.Equal(got, want) {
				t.Fatalf("before %q with %d fingerprints for %d lines, after %q:\ngot  %x\nwant %x", before, len(wrong), len(fps), after, got, want)
			}
		}
	}
	// Fingerprints that are not before's (one per line) are not used.
	if got := FingerprintsFrom([]byte("a\nb\n"), []uint64{1}, []byte("a\nb\n")); !slices.Equal(got, Fingerprints(orchestration.SplitLines([]byte("a\nb\n")))) {
		t.Errorf("fingerprints of the wrong length were used: %x", got)
	}
}

func FuzzFingerprintsFrom(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\r\nb"), []byte("a\nb\r\n"))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		want := Fingerprints(orchestration.SplitLines(after))
		fps := Fingerprints(orchestration.SplitLines(before))
		got := FingerprintsFrom(before, fps, after)
		if !slices.Equal(got, want) {
			t.Fatalf("before %q, after %q:\ngot  %x\nwant %x", before, after, got, want)
		}
		// Fingerprints that are not before's, one line short or one
		// too many, are not used.
		for _, wrong := range [][]uint64{fps[:max(len(fps)-1, 0)], append(fps[:len(fps):len(fps)], 1)} {
			if len(wrong) == len(fps) {
				continue
			}
			if got := FingerprintsFrom(before, wrong, after); !slices.Equal(got, want) {
				t.Fatalf("before %q with %d fingerprints for %d lines, after %q:\ngot  %x\nwant %x", before, len(wrong), len(fps), after, got, want)
			}
		}
	})
}

// A Capture that snapshotted a version of a file snapshots the next one
// from it (only the changed lines hashed), with the same result as from
// scratch; and the snapshot of a version it never saw is made from scratch.
func TestCaptureNextVersionSameSnapshot(t *testing.T) {
	dir := t.TempDir()
	c := &Capture{indexDir: dir, store: OpenStore(dir)}
	defer c.Close()
	v1 := []byte(strings.Repeat("unchanged line\n", 300) + "tail\n")
	v2 := []byte("new first line\n" + string(v1[15:]) + "added\n")
	rec := func(mut string, before, after []byte) *orchestration.Record {
		m := &orchestration.Meta{Mutation: mut, AfterSHA256: SHA256Hex(after)}
		if before != nil {
			m.BeforeSHA256 = SHA256Hex(before)
		}
		return &orchestration.Record{Meta: m}
	}
	if err := c.RecordedContent(rec(orchestration.MutationCreate, nil, v1), nil, v1); err != nil {
		t.Fatal(err)
	}
	if err := c.RecordedContent(rec(orchestration.MutationModify, v1, v2), nil, v2); err != nil {
		t.Fatal(err)
	}
	// Also a version whose before this Capture never saw.
	v3 := []byte("x\n" + string(v2))
	if err := c.RecordedContent(rec(orchestration.MutationModify, []byte("never seen\n"), v3), nil, v3); err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]byte{v1, v2, v3} {
		got, ok := Read(dir, SHA256Hex(v))
		if !ok {
			t.Fatalf("no snapshot of %.20q", v)
		}
		if want := Fingerprints(orchestration.SplitLines(v)); !slices.Equal(got, want) {
			t.Errorf("snapshot of %.20q differs from its lines' fingerprints", v)
		}
	}
	if len(c.recent.list) != 3 {
		t.Errorf("the Capture remembers %d versions, want 3", len(c.recent.list))
	}
}
