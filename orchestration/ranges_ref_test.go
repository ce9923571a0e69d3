package orchestration

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// computeRangesRef is ComputeRanges as it was before it set aside the common
// lines on the bytes: every line of both versions split, then diffed. The
// two must agree exactly, ranges and deleted count.
func computeRangesRef(before, after []byte) (ranges []Range, deletedLines int) {
	a, b := SplitLines(before), SplitLines(after)
	removed, inserted := rangesDiff(a, b)
	for _, r := range removed {
		if r {
			deletedLines++
		}
	}
	for j := 0; j < len(b); {
		if !inserted[j] {
			j++
			continue
		}
		k := j
		for k < len(b) && inserted[k] {
			k++
		}
		ranges = append(ranges, Range{StartLine: j + 1, EndLine: k, ContentHash: rangesHash(b[j:k])})
		j = k
	}
	return ranges, deletedLines
}

func rangesAgree(t *testing.T, before, after []byte) {
	t.Helper()
	got, gotDel := ComputeRanges(before, after)
	want, wantDel := computeRangesRef(before, after)
	if !reflect.DeepEqual(got, want) || gotDel != wantDel {
		t.Fatalf("ComputeRanges(%q, %q) = %v, %d; reference %v, %d", before, after, got, gotDel, want, wantDel)
	}
}

// FuzzComputeRangesReference compares ComputeRanges with the reference on
// any two versions, and on versions sharing a long beginning and end (the
// common case, which the fuzzer alone rarely builds).
func FuzzComputeRangesReference(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("p\n"), []byte("s\n"))
	f.Add([]byte("q\r\nx\n"), []byte("q\nx\nx\n"), []byte(""), []byte("x"))
	f.Add([]byte("x"), []byte("x\ny"), []byte("\r"), []byte("\r\n"))
	f.Add([]byte(""), []byte("\n\n"), []byte("\n"), []byte(""))
	f.Fuzz(func(t *testing.T, before, after, prefix, suffix []byte) {
		rangesAgree(t, before, after)
		wrap := func(m []byte) []byte {
			return append(append(append([]byte{}, prefix...), m...), suffix...)
		}
		rangesAgree(t, wrap(before), wrap(after))
	})
}

// TestComputeRangesMatchesReference draws versions from a few lines with
// and without "\r", with and without a final newline, and edits them a
// little or a lot.
func TestComputeRangesMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"a", "b", "a\r", "", "\r", "long line of text", "x"}
	build := func(lines []string, final bool) []byte {
		var b bytes.Buffer
		for i, l := range lines {
			b.WriteString(l)
			if i < len(lines)-1 || final {
				b.WriteByte('\n')
			}
		}
		return b.Bytes()
	}
	for range 20000 {
		n := r.IntN(30)
		a := make([]string, n)
		for i := range a {
			a[i] = words[r.IntN(len(words))]
		}
		b := append([]string{}, a...)
		for range r.IntN(4) {
			switch i := r.IntN(len(b) + 1); r.IntN(3) {
			case 0:
				b = append(b[:i], append([]string{words[r.IntN(len(words))]}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = words[r.IntN(len(words))]
				}
			}
		}
		rangesAgree(t, build(a, r.IntN(3) != 0), build(b, r.IntN(3) != 0))
	}
}

func TestCommonPrefixSuffixLen(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		n := r.IntN(700)
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + r.IntN(2))
		}
		b := append([]byte{}, a[:r.IntN(n+1)]...)
		b = append(b, a[r.IntN(n+1):]...)
		if r.IntN(2) == 0 && len(b) > 0 {
			b[r.IntN(len(b))] ^= 1
		}
		p := 0
		for p < len(a) && p < len(b) && a[p] == b[p] {
			p++
		}
		s := 0
		for s < len(a) && s < len(b) && a[len(a)-1-s] == b[len(b)-1-s] {
			s++
		}
		if got := CommonPrefixLen(a, b); got != p {
			t.Fatalf("CommonPrefixLen(%q, %q) = %d, want %d", a, b, got, p)
		}
		if got := CommonSuffixLen(a, b); got != s {
			t.Fatalf("CommonSuffixLen(%q, %q) = %d, want %d", a, b, got, s)
		}
	}
}

// BenchmarkComputeRanges64K is the trace hook's diff of a 64 KiB rewrite
// that changed the first line, the shape of the dispatch benchmark's
// writes.
func BenchmarkComputeRanges64K(b *testing.B) {
	line := bytes.Repeat([]byte("y"), 63)
	before := bytes.Repeat(append(line, '\n'), 1024)
	after := append([]byte("00000032"), before[8:]...)
	b.SetBytes(int64(len(after)))
	for b.Loop() {
		ComputeRanges(before, after)
	}
}

func BenchmarkComputeRanges64KReference(b *testing.B) {
	line := bytes.Repeat([]byte("y"), 63)
	before := bytes.Repeat(append(line, '\n'), 1024)
	after := append([]byte("00000032"), before[8:]...)
	b.SetBytes(int64(len(after)))
	for b.Loop() {
		computeRangesRef(before, after)
	}
}
