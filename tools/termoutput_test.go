package tools

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Expectations from Roo Code's own tests of these functions, and a few
// worked out by hand from its implementation.
func TestProcessCarriageReturns(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Line 1\nLine 2\nLine 3", "Line 1\nLine 2\nLine 3"},
		{"Progress: [===>---------] 30%\rProgress: [======>------] 60%\rProgress: [==========>] 100%", "Progress: [==========>] 100%%"},
		{"Line 1\rUpdated Line 1\nLine 2\rUpdated Line 2\rFinal Line 2", "Updated Line 1\nFinal Line 2 2"},
		{"Initial text\rReplacement text\r", "Replacement text"},
		{"Hello\rWorld\r", "World"},
		{"Line 1\nLine 2\rUpdated Line 2\nLine 3", "Line 1\nUpdated Line 2\nLine 3"},
		{"10%|██        | 10/100 [00:01<00:09, 10.00it/s]\r20%|████      | 20/100 [00:02<00:08, 10.00it/s]\r100%|██████████| 100/100 [00:10<00:00, 10.00it/s]", "100%|██████████| 100/100 [00:10<00:00, 10.00it/s]"},
		{"\x1b]633;C\x07Loading\rLoading.\rLoading..\rLoading...\x1b]633;D\x07", "Loading...\x1b]633;D\x07"},
		{"Step 1: Starting\rStep 1: In progress\rStep 1: Done\nStep 2: Starting\rStep 2: In progress\rStep 2: Done", "Step 1: Donerogress\nStep 2: Donerogress"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"", ""},
	} {
		if got := ProcessCarriageReturns(tc.in); got != tc.want {
			t.Errorf("ProcessCarriageReturns(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestProcessBackspaces(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc\b\bxy", "axy"},
		{"\b\babc", "abc"},
		{"ab\bc\b\bd", "d"},
		{"spin|\b/\b-\b\\\bdone", "spindone"},
		{"é\bx", "x"},
	} {
		if got := ProcessBackspaces(tc.in); got != tc.want {
			t.Errorf("ProcessBackspaces(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestApplyRunLengthEncoding(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"longerline\nlongerline\nlongerline\nlongerline\nlongerline\nlongerline\n", "longerline\n<previous line repeated 5 additional times>\n"},
		{"y\ny\ny\ny\ny\n", "y\ny\ny\ny\ny\n"},
		{"a\nb\nb\nc", "a\nb\nb\nc"},
		// A run in the middle weighs its note against all its copies.
		{strings.Repeat("0123456789abcdef\n", 4) + "end\n", "0123456789abcdef\n<previous line repeated 3 additional times>\nend\n"},
	} {
		if got := ApplyRunLengthEncoding(tc.in); got != tc.want {
			t.Errorf("ApplyRunLengthEncoding(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTruncateOutput(t *testing.T) {
	var lines []string
	for i := 1; i <= 25; i++ {
		lines = append(lines, fmt.Sprintf("line%d", i))
	}
	want := "line1\nline2\n\n[...15 lines omitted...]\n\nline18\nline19\nline20\nline21\nline22\nline23\nline24\nline25"
	if got := TruncateOutput(strings.Join(lines, "\n"), 10, 0); got != want {
		t.Errorf("25 lines, limit 10:\n%q\nwant\n%q", got, want)
	}
	for _, s := range []string{"", "single line", "line1\nline2\nline3"} {
		if got := TruncateOutput(s, 10, 0); got != s {
			t.Errorf("TruncateOutput(%q) = %q", s, got)
		}
	}
	// The character limit wins: 20% head, 80% tail.
	long := strings.Repeat("A", 50) + "\n" + strings.Repeat("B", 50)
	got := TruncateOutput(long, 1, 40)
	if got != strings.Repeat("A", 8)+"\n[...61 characters omitted...]\n"+strings.Repeat("B", 32) {
		t.Errorf("character limit: %q", got)
	}
	// Never a cut through a character.
	got = TruncateOutput(strings.Repeat("é😀", 100), 0, 33)
	if !utf8.ValidString(got) {
		t.Errorf("cut through a character: %q", got)
	}
}

func TestCompressTerminalOutput(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= 100; i += 10 {
		fmt.Fprintf(&b, "\rDownloading %3d%%", i)
	}
	b.WriteString("\n")
	for range 1000 {
		b.WriteString("warning: deprecated API used here\n")
	}
	b.WriteString("ok\n")
	got := CompressTerminalOutput(b.String(), DefaultTerminalLineLimit, DefaultTerminalCharLimit)
	want := "Downloading 100%\nwarning: deprecated API used here\n<previous line repeated 999 additional times>\nok\n"
	if got != want {
		t.Errorf("CompressTerminalOutput = %q, want %q", got, want)
	}
}

func FuzzCompressTerminalOutput(f *testing.F) {
	for _, s := range []string{"a\rb\nc\b", "x\nx\nx\n", "\b\r\n", "😀\r😀\b"} {
		f.Add(s, 3, 20)
	}
	f.Fuzz(func(t *testing.T, s string, lines, chars int) {
		lines, chars = lines%1000, chars%100000
		if !utf8.ValidString(s) {
			return
		}
		got := CompressTerminalOutput(s, lines, chars)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if chars > 0 && jsLen(got) > chars+len("\n[...  characters omitted...]\n")+20 {
			t.Fatalf("CompressTerminalOutput(%q, %d, %d) is %d units long", s, lines, chars, jsLen(got))
		}
		if strings.ContainsAny(ProcessBackspaces(ProcessCarriageReturns(s)), "\b") {
			t.Fatal("a backspace survived")
		}
	})
}
