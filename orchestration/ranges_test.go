package orchestration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rangesTestSHA is the expected hash computed without any of our code.
func rangesTestSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestComputeRanges(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          []Range
		deleted       int
	}{
		{
			name:   "modify middle line",
			before: "a\nb\nc\n", after: "a\nB\nc\n",
			want:    []Range{{StartLine: 2, EndLine: 2, ContentHash: rangesTestSHA("B\n")}},
			deleted: 1,
		},
		{
			name:   "append to a file without final newline",
			before: "a\nb", after: "a\nb\nc",
			want: []Range{{StartLine: 3, EndLine: 3, ContentHash: rangesTestSHA("c\n")}},
		},
		{
			name:   "modify the last line, no final newline",
			before: "a\nb\nc", after: "a\nb\nC",
			want:    []Range{{StartLine: 3, EndLine: 3, ContentHash: rangesTestSHA("C\n")}},
			deleted: 1,
		},
		{
			name:   "modify the last line, final newline",
			before: "a\nb\nc\n", after: "a\nb\nlast one\n",
			want:    []Range{{StartLine: 3, EndLine: 3, ContentHash: rangesTestSHA("last one\n")}},
			deleted: 1,
		},
		{
			name:   "insertion in the middle",
			before: "1\n2\n3\n4\n", after: "1\n2\nx\ny\n3\n4\n",
			want: []Range{{StartLine: 3, EndLine: 4, ContentHash: rangesTestSHA("x\ny\n")}},
		},
		{
			name:   "CRLF file, inserted line hashed with LF",
			before: "a\r\nb\r\n", after: "a\r\nX\r\nb\r\n",
			want: []Range{{StartLine: 2, EndLine: 2, ContentHash: rangesTestSHA("X\n")}},
		},
		{
			name:   "line endings alone changed",
			before: "a\nb\n", after: "a\r\nb\r\n",
		},
		{
			name:   "empty after",
			before: "a\nb\n", after: "",
			deleted: 2,
		},
		{
			name:   "pure deletion",
			before: "a\nb\nc\nd\n", after: "a\nd\n",
			deleted: 2,
		},
		{
			name:   "new file without final newline",
			before: "", after: "x\ny",
			want: []Range{{StartLine: 1, EndLine: 2, ContentHash: rangesTestSHA("x\ny\n")}},
		},
		{
			name:   "a lone newline is one empty line",
			before: "", after: "\n",
			want: []Range{{StartLine: 1, EndLine: 1, ContentHash: rangesTestSHA("\n")}},
		},
		{
			name:   "two runs",
			before: "a\nb\nc\nd\ne\n", after: "a\nB\nc\nd\nE\nF\n",
			want: []Range{
				{StartLine: 2, EndLine: 2, ContentHash: rangesTestSHA("B\n")},
				{StartLine: 5, EndLine: 6, ContentHash: rangesTestSHA("E\nF\n")},
			},
			deleted: 2,
		},
		{
			name:   "unchanged",
			before: "a\nb\n", after: "a\nb\n",
		},
		{
			name:   "CRLF in the middle of a line is content",
			before: "a\rb\n", after: "a\r\nb\n",
			want:    []Range{{StartLine: 1, EndLine: 2, ContentHash: rangesTestSHA("a\nb\n")}},
			deleted: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, deleted := ComputeRanges([]byte(tt.before), []byte(tt.after))
			if !reflect.DeepEqual(got, tt.want) || deleted != tt.deleted {
				t.Errorf("ComputeRanges(%q, %q) = %v, %d; want %v, %d", tt.before, tt.after, got, deleted, tt.want, tt.deleted)
			}
		})
	}
}

func TestRangeHash(t *testing.T) {
	content := []byte("one\r\ntwo\nthree")
	tests := []struct {
		start, end int
		want       string
	}{
		{1, 1, rangesTestSHA("one\n")},
		{1, 3, rangesTestSHA("one\ntwo\nthree\n")},
		{3, 3, rangesTestSHA("three\n")},
		{0, 1, ""},
		{2, 1, ""},
		{3, 4, ""},
	}
	for _, tt := range tests {
		if got := RangeHash(content, tt.start, tt.end); got != tt.want {
			t.Errorf("RangeHash(%q, %d, %d) = %q, want %q", content, tt.start, tt.end, got, tt.want)
		}
	}
	if got, want := HashLines("one\r\n", "two", "three\n"), rangesTestSHA("one\ntwo\nthree\n"); got != want {
		t.Errorf("HashLines = %q, want %q", got, want)
	}
	if got, want := HashLines(), rangesTestSHA(""); got != want {
		t.Errorf("HashLines() = %q, want %q", got, want)
	}
}

// A small edit of a large file and a complete rewrite give correct ranges;
// their times are logged.
func TestComputeRangesLargeFiles(t *testing.T) {
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "line %d of a large file\n", i)
	}
	before := []byte(b.String())
	after := bytes.Replace(before, []byte("line 100 of"), []byte("LINE 100 of"), 1)
	after = bytes.Replace(after, []byte("line 30000 of a large file\n"), []byte("new\nlines\nline 30000 of a large file\n"), 1)
	after = bytes.Replace(after, []byte("line 40000 of a large file\n"), nil, 1)

	start := time.Now()
	got, deleted := ComputeRanges(before, after)
	small := time.Since(start)
	want := []Range{
		{StartLine: 101, EndLine: 101, ContentHash: rangesTestSHA("LINE 100 of a large file\n")},
		{StartLine: 30001, EndLine: 30002, ContentHash: rangesTestSHA("new\nlines\n")},
	}
	if !reflect.DeepEqual(got, want) || deleted != 2 {
		t.Errorf("ComputeRanges(large, small edits) = %v, %d; want %v, 2", got, deleted, want)
	}

	// Both sides drawn from a few distinct lines: many matches, a long
	// edit script, the worst case for Myers.
	rng := rand.New(rand.NewPCG(1, 2))
	var x, y strings.Builder
	for range 20000 {
		fmt.Fprintf(&x, "w%d\n", rng.IntN(8))
		fmt.Fprintf(&y, "w%d\n", rng.IntN(8))
	}
	start = time.Now()
	rs, _ := ComputeRanges([]byte(x.String()), []byte(y.String()))
	rewrite := time.Since(start)
	rangesCheck(t, []byte(x.String()), []byte(y.String()), rs)
	// Times are logged, never asserted: BenchmarkComputeRanges-style
	// figures belong in benchmarks, and a loaded machine is not a slow
	// algorithm.
	t.Logf("50,000 lines, 3 edits: %v; 20,000 lines rewritten: %v, %d ranges", small, rewrite, len(rs))
}

// rangesCheck asserts the invariants of ComputeRanges and that applying the
// edit script to before gives after.
func rangesCheck(t *testing.T, before, after []byte, ranges []Range) {
	t.Helper()
	a, b := SplitLines(before), SplitLines(after)
	inRange := make([]bool, len(b))
	for i, r := range ranges {
		if r.StartLine < 1 || r.EndLine < r.StartLine || r.EndLine > len(b) {
			t.Fatalf("range %d-%d outside 1..%d", r.StartLine, r.EndLine, len(b))
		}
		if i > 0 && r.StartLine <= ranges[i-1].EndLine+1 {
			t.Fatalf("ranges %v unsorted, overlapping or not maximal", ranges)
		}
		// RangeHash splits the whole file each time: only for a few ranges.
		if len(ranges) <= 100 {
			if want := RangeHash(after, r.StartLine, r.EndLine); r.ContentHash != want {
				t.Fatalf("range %d-%d hash %s, want %s", r.StartLine, r.EndLine, r.ContentHash, want)
			}
		}
		var s strings.Builder
		for j := r.StartLine; j <= r.EndLine; j++ {
			inRange[j-1] = true
			s.Write(b[j-1])
			s.WriteByte('\n')
		}
		if want := rangesTestSHA(s.String()); r.ContentHash != want {
			t.Fatalf("range %d-%d hash %s, recomputed %s", r.StartLine, r.EndLine, r.ContentHash, want)
		}
	}
	// The lines outside the ranges are kept lines: a subsequence of before.
	i := 0
	for j, line := range b {
		if inRange[j] {
			continue
		}
		for i < len(a) && !bytes.Equal(a[i], line) {
			i++
		}
		if i == len(a) {
			t.Fatalf("kept line %d %q is not in before in order", j+1, line)
		}
		i++
	}
	// Applying the edit script reconstructs after.
	removed, inserted := rangesDiff(a, b)
	var out [][]byte
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j < len(b) && inserted[j]:
			out = append(out, b[j])
			j++
		case i < len(a) && removed[i]:
			i++
		case i < len(a) && j < len(b) && bytes.Equal(a[i], b[j]):
			out = append(out, a[i])
			i++
			j++
		default:
			t.Fatalf("edit script does not apply at before line %d, after line %d", i+1, j+1)
		}
	}
	if len(out) != len(b) {
		t.Fatalf("applied diff has %d lines, want %d", len(out), len(b))
	}
	for j := range b {
		if !bytes.Equal(out[j], b[j]) {
			t.Fatalf("applied diff line %d = %q, want %q", j+1, out[j], b[j])
		}
		if inserted[j] != inRange[j] {
			t.Fatalf("line %d: inserted %v but in a range %v", j+1, inserted[j], inRange[j])
		}
	}
}

// rangesLCS is the textbook dynamic program, for small inputs.
func rangesLCS(a, b [][]byte) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if bytes.Equal(a[i], b[j]) {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func FuzzComputeRanges(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	f.Add([]byte("a\r\nb"), []byte("a\nb\nc"))
	f.Add([]byte(""), []byte("\n\n"))
	f.Add([]byte("x\ny\nx\ny\n"), []byte("y\nx\ny\nx"))
	f.Add([]byte("1\n2\n3\n4\n5\n"), []byte("1\n3\n2\n5\n4\n6\n"))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		ranges, deleted := ComputeRanges(before, after)
		rangesCheck(t, before, after, ranges)
		a, b := SplitLines(before), SplitLines(after)
		changed := 0
		for _, r := range ranges {
			changed += r.EndLine - r.StartLine + 1
		}
		kept := len(b) - changed
		if len(a)-deleted != kept {
			t.Fatalf("%d before lines - %d deleted != %d kept", len(a), deleted, kept)
		}
		if len(a) <= 300 && len(b) <= 300 {
			if lcs := rangesLCS(a, b); kept != lcs {
				t.Fatalf("kept %d lines, longest common subsequence is %d", kept, lcs)
			}
		}
	})
}

// BenchmarkComputeRanges is the trace hook's diff of a 50,000-line file with
// one modified and two inserted lines.
func BenchmarkComputeRanges(b *testing.B) {
	var s strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&s, "\tx := compute(%d) // a line of Go\n", i)
	}
	before := []byte(s.String())
	after := bytes.Replace(before, []byte("compute(25000)"), []byte("compute(-1)\n\tnew()\n\tnew()"), 1)
	b.SetBytes(int64(len(after)))
	for b.Loop() {
		ComputeRanges(before, after)
	}
}
