package tools

import (
	"errors"
	"testing"
)

// Each want is what Node (V8) returns for s.replace(new RegExp(pattern,
// ignoreCase ? "gi" : "g"), tmpl).
func TestJSReplace(t *testing.T) {
	for _, tc := range []struct {
		pattern, s, tmpl string
		ignoreCase       bool
		want             string
	}{
		// Empty matches: JavaScript keeps one right after a match.
		{"b*", "abc", "-", false, "-a--c-"},
		{"b|$", "ab", "-", false, "a--"},
		{"x*", "ab", "-", false, "-a-b-"},
		{`\s*$`, "foo  ", "!", false, "foo!!"},
		// Case folding without the u flag.
		{"a", "AaA", "x", true, "xxx"},
		{"s", "sS\u017f", "x", true, "xx\u017f"},
		{"k", "kK\u212a", "x", true, "xx\u212a"},
		{"\u017f", "sS\u017f", "x", true, "sSx"},
		{"ß", "ß\u1e9eSS", "x", true, "x\u1e9eSS"},
		{"σ", "Σσς", "x", true, "xxx"},
		{"[a-z]+", "Hello \u017fK", "<$&>", true, "<Hello> \u017f<K>"},
		// Classes and escapes.
		{`\w+`, "héllo wörld", "[$&]", false, "[h]é[llo] [w]ö[rld]"},
		{`\d`, "٣3", "x", false, "٣x"},
		{`\s`, "a\u00a0b\u2003c\td", "_", false, "a_b_c_d"},
		{".", "a\r\nb\u2028c", "x", false, "x\r\nx\u2028x"},
		{"[^]", "a\nb", "x", false, "xxx"},
		{"[]", "ab", "x", false, "ab"},
		{`\101\0`, "A\x00", "x", false, "x"},
		{`\8`, "8", "x", false, "x"},
		{`\cJ`, "\n", "x", false, "x"},
		{`\c`, `\c`, "x", false, "x"},
		{`[\b]`, "a\bb", "x", false, "axb"},
		{`[\w-z]`, "a-z", "x", false, "xxx"},
		{"x{,2}", "x{,2}", "y", false, "y"},
		{"{", "{", "x", false, "x"},
		{"a{2}", "aaaa", "x", false, "xx"},
		{`\k`, "k", "x", false, "x"},
		{`\p{L}`, "p{L}", "x", false, "x"},
		{`\u0041\x41`, "AA", "x", false, "x"},
		{`\uD83D\uDE00`, "a😀", "x", false, "ax"},
		{`\/`, "a/b", "|", false, "a|b"},
		{"(?:a|ab)(c|bcd)", "abcd", "[$1]", false, "[bcd]"},
		{"a+?", "aaa", "x", false, "xxx"},
		{"^a", "aa", "x", false, "xa"},
		{"a$", "aa\n", "x", false, "aa\n"},
		// Replacement patterns.
		{"(a)|(b)", "ab", "[$1|$2]", false, "[a|][|b]"},
		{"(a)", "a", "$01$10$11$00$0$", false, "aa0a1$00$0$"},
		{"(?<n>a)", "a", "$<n>$<m>$<", false, "a$<"},
		{"a", "a", "$<n>", false, "$<n>"},
		{"a", "xay", "$`$'", false, "xxyy"},
	} {
		re, err := compileJS(tc.pattern, tc.ignoreCase)
		if err != nil {
			t.Errorf("compileJS(%q): %v", tc.pattern, err)
			continue
		}
		if got, _ := re.replaceAll(tc.s, tc.tmpl, "\n"); got != tc.want {
			t.Errorf("%q.replace(/%s/g%s, %q) = %q, want %q", tc.s, tc.pattern, map[bool]string{true: "i"}[tc.ignoreCase], tc.tmpl, got, tc.want)
		}
	}
}

func TestJSCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		pattern     string
		unsupported bool // valid JavaScript that RE2 cannot run
	}{
		{"a(?=b)", true},
		{"a(?!b)", true},
		{"(?<=a)b", true},
		{"(?<!a)b", true},
		{`(a)\1`, true},
		{`(?<n>a)\k<n>`, true},
		{"(?i:a)", true},
		{"a{1001}", true},
		{"a(", false},
		{"a)", false},
		{"*a", false},
		{"a**", false},
		{"^*", false},
		{"[b-a]", false},
		{"a{2,1}", false},
		{`a\`, false},
		{"(?<n>a)(?<n>b)", false},
		{`(?<n>a)\k`, false},
		{"[a", false},
	} {
		_, err := compileJS(tc.pattern, false)
		var se *jsSyntaxError
		if !errors.As(err, &se) || se.unsupported != tc.unsupported {
			t.Errorf("compileJS(%q) = %v, want a jsSyntaxError with unsupported=%v", tc.pattern, err, tc.unsupported)
		}
	}
}

func TestJSEscapeIsLiteral(t *testing.T) {
	const text = `a.b*c+d?e^f$g{h}i(j)k|l[m]n\o-p/q`
	re, err := compileJS(jsEscape(text), false)
	if err != nil {
		t.Fatal(err)
	}
	if got, n := re.replaceAll("<"+text+">", "X", "\n"); got != "<X>" || n != 1 {
		t.Errorf("literal replace = %q (%d matches), want <X>", got, n)
	}
}

// Any pattern compiles or is refused with a jsSyntaxError, and a compiled
// one replaces without panicking, leaving the text around matches intact.
func FuzzCompileJS(f *testing.F) {
	for _, s := range []string{"b*", `(?<n>a)\k<n>`, `[\w-z]`, `\c`, `\u{41}`, "a{2,1}", "(?:", `\uD83D\uDE00`, "[^]", "x{,2}"} {
		f.Add(s, "abc", "$&$1$<n>", false)
	}
	f.Fuzz(func(t *testing.T, pattern, s, tmpl string, ignoreCase bool) {
		re, err := compileJS(pattern, ignoreCase)
		if err != nil {
			var se *jsSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("compileJS(%q) = %v (%T), want a jsSyntaxError", pattern, err, err)
			}
			return
		}
		got, n := re.replaceAll(s, "", "\n")
		if n == 0 && got != s {
			t.Fatalf("no match, yet %q became %q", s, got)
		}
		re.replaceAll(s, tmpl, "\r\n")
	})
}
