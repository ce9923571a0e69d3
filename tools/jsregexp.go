package tools

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// jsRegexp is a JavaScript regular expression as Roo Code builds them for
// search_and_replace (new RegExp(pattern, "g") or "gi": no u, m, s or y
// flag), translated into Go's RE2 syntax. Go then matches what JavaScript
// would, with these exceptions, which are refused rather than approximated:
// lookahead and lookbehind, backreferences, and the (?flags:...) modifier
// groups. Characters outside the Basic Multilingual Plane are single
// characters here; JavaScript without the u flag sees two code units.
type jsRegexp struct {
	re *regexp.Regexp
	// probe is \A(?s:.)(?:re): it matches re at a given position with the
	// character before it in view, which jsReplace needs to find the empty
	// matches JavaScript makes and Go's FindAll skips.
	probe  *regexp.Regexp
	groups int
	// names maps JavaScript group names to group numbers; nil when the
	// pattern has no named group, which changes what "$<" means.
	names map[string]int
}

// jsSyntaxError says why a pattern cannot be used. Unsupported is set when
// the pattern is valid JavaScript that Go's RE2 cannot run.
type jsSyntaxError struct {
	msg         string
	unsupported bool
}

func (e *jsSyntaxError) Error() string { return e.msg }

// compileJS translates and compiles a JavaScript pattern.
func compileJS(pattern string, ignoreCase bool) (*jsRegexp, error) {
	t := &jsTranslator{src: []rune(pattern), ic: ignoreCase}
	t.prescan()
	if err := t.translate(); err != nil {
		return nil, err
	}
	goSrc := t.out.String()
	re, err := regexp.Compile(goSrc)
	if err != nil {
		return nil, &jsSyntaxError{unsupported: true,
			msg: fmt.Sprintf("Go's RE2 engine cannot run this pattern: %v", err)}
	}
	probe, err := regexp.Compile(`\A(?s:.)(?:` + goSrc + `)`)
	if err != nil {
		return nil, &jsSyntaxError{unsupported: true,
			msg: fmt.Sprintf("Go's RE2 engine cannot run this pattern: %v", err)}
	}
	return &jsRegexp{re: re, probe: probe, groups: t.group, names: t.names}, nil
}

// jsEscape is Roo Code's escapeRegExp: the literal search text as a pattern.
func jsEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`.*+?^${}()|[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// matches returns every match JavaScript's global replace would visit in s,
// as submatch index slices. Go's FindAll drops an empty match that directly
// follows a non-empty one ("abc" with /b*/g); JavaScript keeps it, so the
// empty match at the end of each non-empty match is looked for with probe.
func (j *jsRegexp) matches(s string) [][]int {
	found := j.re.FindAllStringSubmatchIndex(s, -1)
	var out [][]int
	for i, m := range found {
		out = append(out, m)
		p := m[1]
		if m[0] == p || (i+1 < len(found) && found[i+1][0] == p) {
			continue
		}
		_, w := utf8.DecodeLastRuneInString(s[:p])
		loc := j.probe.FindStringSubmatchIndex(s[p-w:])
		if loc == nil || loc[1] != w {
			continue
		}
		extra := make([]int, len(loc))
		extra[0], extra[1] = p, p
		for k := 2; k < len(loc); k++ {
			if loc[k] < 0 {
				extra[k] = -1
			} else {
				extra[k] = loc[k] + p - w
			}
		}
		out = append(out, extra)
	}
	return out
}

// replaceAll is s.replace(re, tmpl) for a global re: every match replaced by
// tmpl expanded as GetSubstitution does. eol, if not "\n", is put in place
// of each bare "\n" of the expansions, as an editor does with inserted text
// in a file with other line endings. It returns the count of matches.
func (j *jsRegexp) replaceAll(s, tmpl, eol string) (string, int) {
	ms := j.matches(s)
	if len(ms) == 0 {
		return s, 0
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		exp := j.expand(tmpl, s, m)
		if eol != "\n" {
			exp = withEOL(exp, eol)
		}
		b.WriteString(exp)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(ms)
}

// withEOL turns every "\n" not preceded by "\r" into eol.
func withEOL(s, eol string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteString(eol)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// expand is ECMAScript's GetSubstitution: $$, $&, $`, $', $n and $nn (the
// two-digit form only when that group exists), and $<name> when the pattern
// has named groups. Anything else after "$" is literal.
func (j *jsRegexp) expand(tmpl, s string, m []int) string {
	if !strings.Contains(tmpl, "$") {
		return tmpl
	}
	group := func(n int) string {
		if 2*n+1 >= len(m) || m[2*n] < 0 {
			return "" // a group that did not take part is undefined: ""
		}
		return s[m[2*n]:m[2*n+1]]
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		if c != '$' || i+1 >= len(tmpl) {
			b.WriteByte(c)
			i++
			continue
		}
		switch n := tmpl[i+1]; {
		case n == '$':
			b.WriteByte('$')
			i += 2
		case n == '&':
			b.WriteString(s[m[0]:m[1]])
			i += 2
		case n == '`':
			b.WriteString(s[:m[0]])
			i += 2
		case n == '\'':
			b.WriteString(s[m[1]:])
			i += 2
		case '0' <= n && n <= '9':
			digits := 1
			idx := int(n - '0')
			if i+2 < len(tmpl) && '0' <= tmpl[i+2] && tmpl[i+2] <= '9' {
				if two := idx*10 + int(tmpl[i+2]-'0'); two <= j.groups {
					digits, idx = 2, two
				}
			}
			if 1 <= idx && idx <= j.groups {
				b.WriteString(group(idx))
			} else {
				b.WriteString(tmpl[i : i+1+digits])
			}
			i += 1 + digits
		case n == '<' && j.names != nil:
			gt := strings.IndexByte(tmpl[i+2:], '>')
			if gt < 0 {
				b.WriteString("$<")
				i += 2
				break
			}
			if idx, ok := j.names[tmpl[i+2:i+2+gt]]; ok {
				b.WriteString(group(idx))
			}
			i += 2 + gt + 1
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String()
}

// jsTranslator turns a JavaScript pattern (Annex B syntax, as browsers and
// Node accept without the u flag) into RE2 syntax. Case-insensitive matching
// is spelled out as explicit character sets with JavaScript's own case
// equivalence, since RE2's (?i) also folds characters JavaScript keeps apart
// (the long s and the Kelvin sign match s and k only in Go).
type jsTranslator struct {
	src      []rune
	pos      int
	out      strings.Builder
	ic       bool
	total    int // capturing groups in the whole pattern
	hasNames bool
	group    int // capturing groups opened so far
	names    map[string]int
	upper    cases.Caser
	canonMem map[rune]rune
}

func (t *jsTranslator) errorf(format string, args ...any) error {
	return &jsSyntaxError{msg: fmt.Sprintf(format, args...)}
}

func (t *jsTranslator) unsupported(format string, args ...any) error {
	return &jsSyntaxError{unsupported: true, msg: fmt.Sprintf(format, args...)}
}

func (t *jsTranslator) eof() bool { return t.pos >= len(t.src) }

func (t *jsTranslator) peek(k int) rune {
	if t.pos+k < len(t.src) {
		return t.src[t.pos+k]
	}
	return -1
}

// prescan counts the capturing groups and notes named ones: whether \1 is a
// backreference or an octal escape, and what \k means, depend on the whole
// pattern.
func (t *jsTranslator) prescan() {
	inClass := false
	for i := 0; i < len(t.src); i++ {
		switch c := t.src[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(t.src) && t.src[i+1] == '^' {
				i++
			}
			if i+1 < len(t.src) && t.src[i+1] == ']' {
				i++ // [] and [^] are complete classes
				inClass = false
			}
		case c == '(':
			if i+1 < len(t.src) && t.src[i+1] != '?' {
				t.total++
			} else if i+3 < len(t.src) && t.src[i+2] == '<' && t.src[i+3] != '=' && t.src[i+3] != '!' {
				t.total++
				t.hasNames = true
			}
		}
	}
}

func (t *jsTranslator) translate() error {
	if err := t.disjunction(); err != nil {
		return err
	}
	if !t.eof() {
		return t.errorf("unmatched ')' at offset %d", t.pos)
	}
	return nil
}

func (t *jsTranslator) disjunction() error {
	for {
		if err := t.alternative(); err != nil {
			return err
		}
		if t.peek(0) != '|' {
			return nil
		}
		t.pos++
		t.out.WriteByte('|')
	}
}

func (t *jsTranslator) alternative() error {
	for !t.eof() && t.peek(0) != '|' && t.peek(0) != ')' {
		if err := t.term(); err != nil {
			return err
		}
	}
	return nil
}

func (t *jsTranslator) term() error {
	switch c := t.peek(0); c {
	case '^':
		t.pos++
		t.out.WriteString(`\A`)
		return t.noQuantifier("^")
	case '$':
		t.pos++
		t.out.WriteString(`\z`)
		return t.noQuantifier("$")
	case '\\':
		if b := t.peek(1); b == 'b' || b == 'B' {
			t.pos += 2
			t.out.WriteString(`\` + string(b))
			return t.noQuantifier(`\` + string(b))
		}
		if err := t.atomEscape(); err != nil {
			return err
		}
	case '(':
		if err := t.groupAtom(); err != nil {
			return err
		}
	case '[':
		if err := t.class(); err != nil {
			return err
		}
	case '.':
		t.pos++
		t.out.WriteString(`[^\n\r\x{2028}\x{2029}]`)
	case '*', '+', '?':
		return t.errorf("nothing to repeat before %q at offset %d", c, t.pos)
	case '{':
		if _, _, _, ok := t.braces(t.pos); ok {
			return t.errorf("nothing to repeat before %q at offset %d", c, t.pos)
		}
		t.pos++
		t.literal('{')
	default:
		t.pos++
		t.literal(c)
	}
	return t.quantifier()
}

// noQuantifier refuses a quantifier after an assertion, as JavaScript does.
func (t *jsTranslator) noQuantifier(what string) error {
	switch t.peek(0) {
	case '*', '+', '?':
		return t.errorf("nothing to repeat: %s cannot be quantified", what)
	case '{':
		if _, _, _, ok := t.braces(t.pos); ok {
			return t.errorf("nothing to repeat: %s cannot be quantified", what)
		}
	}
	return nil
}

// braces parses {n}, {n,} or {n,m} at i. max is -1 for no upper bound.
func (t *jsTranslator) braces(i int) (lo, hi, end int, ok bool) {
	if i >= len(t.src) || t.src[i] != '{' {
		return 0, 0, 0, false
	}
	j := i + 1
	num := func() (int, bool) {
		start := j
		for j < len(t.src) && '0' <= t.src[j] && t.src[j] <= '9' {
			j++
		}
		if j == start {
			return 0, false
		}
		n, err := strconv.Atoi(string(t.src[start:j]))
		if err != nil {
			n = 1 << 30 // too large for anyone; refused below
		}
		return n, true
	}
	lo, ok = num()
	if !ok {
		return 0, 0, 0, false
	}
	hi = lo
	if j < len(t.src) && t.src[j] == ',' {
		j++
		hi = -1
		if j < len(t.src) && t.src[j] != '}' {
			if hi, ok = num(); !ok {
				return 0, 0, 0, false
			}
		}
	}
	if j >= len(t.src) || t.src[j] != '}' {
		return 0, 0, 0, false
	}
	return lo, hi, j + 1, true
}

func (t *jsTranslator) quantifier() error {
	switch c := t.peek(0); c {
	case '*', '+', '?':
		t.pos++
		t.out.WriteRune(c)
	case '{':
		lo, hi, end, ok := t.braces(t.pos)
		if !ok {
			return nil // a literal "{" follows
		}
		if hi >= 0 && hi < lo {
			return t.errorf("numbers out of order in {%d,%d} quantifier", lo, hi)
		}
		if lo > 1000 || hi > 1000 {
			return t.unsupported("a repetition count above 1000 (RE2's limit)")
		}
		t.pos = end
		switch {
		case hi == lo:
			fmt.Fprintf(&t.out, "{%d}", lo)
		case hi < 0:
			fmt.Fprintf(&t.out, "{%d,}", lo)
		default:
			fmt.Fprintf(&t.out, "{%d,%d}", lo, hi)
		}
	default:
		return nil
	}
	if t.peek(0) == '?' {
		t.pos++
		t.out.WriteByte('?')
	}
	return nil
}

func (t *jsTranslator) groupAtom() error {
	t.pos++ // (
	if t.peek(0) != '?' {
		t.group++
		t.out.WriteByte('(')
	} else {
		switch a, b := t.peek(1), t.peek(2); {
		case a == ':':
			t.pos += 2
			t.out.WriteString("(?:")
		case a == '=' || a == '!':
			return t.unsupported("lookahead (?%c...) is not supported by Go's RE2 engine", a)
		case a == '<' && (b == '=' || b == '!'):
			return t.unsupported("lookbehind (?<%c...) is not supported by Go's RE2 engine", b)
		case a == '<':
			t.pos += 2
			start := t.pos
			for !t.eof() && t.peek(0) != '>' {
				t.pos++
			}
			if t.eof() {
				return t.errorf("unterminated group name")
			}
			name := string(t.src[start:t.pos])
			t.pos++
			if !jsGroupName(name) {
				return t.errorf("invalid capture group name %q", name)
			}
			if t.names == nil {
				t.names = map[string]int{}
			}
			if _, dup := t.names[name]; dup {
				return t.errorf("duplicate capture group name %q", name)
			}
			t.group++
			t.names[name] = t.group
			t.out.WriteByte('(')
		default:
			return t.unsupported("the group syntax (?%c is not supported", a)
		}
	}
	if err := t.disjunction(); err != nil {
		return err
	}
	if t.peek(0) != ')' {
		return t.errorf("unterminated group")
	}
	t.pos++
	t.out.WriteByte(')')
	return nil
}

// jsGroupName reports whether name is a JavaScript identifier.
func jsGroupName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		ok := r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) ||
			(i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) ||
				unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D))
		if !ok {
			return false
		}
	}
	return true
}

// atomEscape translates an escape outside a class (not \b or \B).
func (t *jsTranslator) atomEscape() error {
	t.pos++ // backslash
	if t.eof() {
		return t.errorf(`\ at end of pattern`)
	}
	c := t.peek(0)
	switch {
	case c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S':
		t.pos++
		set, neg := jsClassEscape(c)
		t.emitSet(set, neg, false)
		return nil
	case '1' <= c && c <= '9':
		start := t.pos
		for !t.eof() && '0' <= t.peek(0) && t.peek(0) <= '9' {
			t.pos++
		}
		if n, err := strconv.Atoi(string(t.src[start:t.pos])); err == nil && n <= t.total {
			return t.unsupported(`backreference \%d is not supported by Go's RE2 engine`, n)
		}
		t.pos = start
	case c == 'k' && t.hasNames:
		if t.peek(1) != '<' {
			return t.errorf(`invalid named reference \k`)
		}
		return t.unsupported(`named backreference \k<...> is not supported by Go's RE2 engine`)
	}
	r, err := t.charEscape(false)
	if err != nil {
		return err
	}
	t.literal(r)
	return nil
}

// charEscape reads the escape after a backslash that stands for one
// character (Annex B: legacy octal and identity escapes included). It
// returns -1 for a \u escape of a lone surrogate, which no UTF-8 text holds.
func (t *jsTranslator) charEscape(inClass bool) (rune, error) {
	c := t.peek(0)
	t.pos++
	switch c {
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'v':
		return '\v', nil
	case 'b':
		if inClass {
			return '\b', nil
		}
	case 'c':
		if l := t.peek(0); l >= 0 && ('a' <= l && l <= 'z' || 'A' <= l && l <= 'Z' ||
			inClass && ('0' <= l && l <= '9' || l == '_')) {
			t.pos++
			return l % 32, nil
		}
		// "\c" without a control letter is a backslash; the c follows.
		t.pos--
		return '\\', nil
	case 'x':
		if v, ok := t.hex(2); ok {
			return v, nil
		}
		return 'x', nil
	case 'u':
		v, ok := t.hex(4)
		if !ok {
			return 'u', nil
		}
		if utf16.IsSurrogate(v) {
			if v < 0xDC00 && t.peek(0) == '\\' && t.peek(1) == 'u' {
				save := t.pos
				t.pos += 2
				if lo, ok := t.hex(4); ok && 0xDC00 <= lo && lo <= 0xDFFF {
					return utf16.DecodeRune(v, lo), nil
				}
				t.pos = save
			}
			return -1, nil
		}
		return v, nil
	case 'k':
		if t.hasNames {
			return 0, t.errorf(`invalid escape \k`)
		}
	}
	if '0' <= c && c <= '7' {
		v := c - '0'
		if '0' <= t.peek(0) && t.peek(0) <= '7' {
			v = v*8 + t.peek(0) - '0'
			t.pos++
			if c <= '3' && '0' <= t.peek(0) && t.peek(0) <= '7' {
				v = v*8 + t.peek(0) - '0'
				t.pos++
			}
		}
		return v, nil
	}
	return c, nil // identity escape, \8 and \9 included
}

func (t *jsTranslator) hex(n int) (rune, bool) {
	if t.pos+n > len(t.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(t.src[t.pos:t.pos+n]), 16, 32)
	if err != nil {
		return 0, false
	}
	t.pos += n
	return rune(v), true
}

// A jsSet is a set of code points as sorted, non-overlapping, non-adjacent
// inclusive ranges.
type jsSet [][2]rune

func (s jsSet) normalize() jsSet {
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	var out jsSet
	for _, r := range s {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s jsSet) complement() jsSet {
	var out jsSet
	next := rune(0)
	for _, r := range s.normalize() {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

var jsSpaceSet = jsSet{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
	{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}

// jsClassEscape is \d, \w, \s and their negations as JavaScript defines them
// without the u flag: ASCII digits and word characters, Unicode spaces.
func jsClassEscape(c rune) (jsSet, bool) {
	switch c {
	case 'd', 'D':
		return jsSet{{'0', '9'}}, c == 'D'
	case 'w', 'W':
		return jsSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}, c == 'W'
	}
	return jsSpaceSet, c == 'S'
}

// class translates [...] and [^...].
func (t *jsTranslator) class() error {
	t.pos++ // [
	neg := false
	if t.peek(0) == '^' {
		neg = true
		t.pos++
	}
	var set jsSet
	for {
		if t.eof() {
			return t.errorf("unterminated character class")
		}
		if t.peek(0) == ']' {
			t.pos++
			break
		}
		a, aSet, err := t.classAtom()
		if err != nil {
			return err
		}
		if t.peek(0) == '-' && t.peek(1) != ']' && t.peek(1) >= 0 {
			t.pos++
			b, bSet, err := t.classAtom()
			if err != nil {
				return err
			}
			if aSet == nil && bSet == nil {
				if a > b {
					return t.errorf("range out of order in character class")
				}
				if a >= 0 {
					set = append(set, [2]rune{a, b})
				}
				continue
			}
			// Annex B: a class escape at either end makes "-" literal.
			set = append(set, [2]rune{'-', '-'})
			set = t.addAtom(set, a, aSet)
			set = t.addAtom(set, b, bSet)
			continue
		}
		set = t.addAtom(set, a, aSet)
	}
	t.emitSet(set, neg, t.ic)
	return nil
}

func (t *jsTranslator) addAtom(set jsSet, r rune, s jsSet) jsSet {
	if s != nil {
		return append(set, s...)
	}
	if r >= 0 {
		set = append(set, [2]rune{r, r})
	}
	return set
}

// classAtom reads one class member: a character (r) or a class escape (set).
func (t *jsTranslator) classAtom() (rune, jsSet, error) {
	c := t.peek(0)
	if c != '\\' {
		t.pos++
		return c, nil, nil
	}
	t.pos++
	if t.eof() {
		return 0, nil, t.errorf(`\ at end of pattern`)
	}
	switch e := t.peek(0); e {
	case 'd', 'D', 'w', 'W', 's', 'S':
		t.pos++
		set, neg := jsClassEscape(e)
		if neg {
			set = set.complement()
		}
		return 0, set, nil
	case 'B':
		t.pos++
		return 'B', nil, nil
	}
	r, err := t.charEscape(true)
	return r, nil, err
}

// literal writes one pattern character.
func (t *jsTranslator) literal(r rune) {
	if r < 0 {
		t.out.WriteString(`[^\x{0}-\x{10FFFF}]`) // a lone surrogate matches nothing
		return
	}
	if t.ic {
		if fold := t.fold(jsSet{{r, r}}); len(fold) > 1 || fold[0][0] != fold[0][1] {
			t.emitSet(fold, false, false)
			return
		}
	}
	writeRune(&t.out, r)
}

// emitSet writes a set as an RE2 class; fold closes it under JavaScript's
// case equivalence first.
func (t *jsTranslator) emitSet(set jsSet, neg, fold bool) {
	set = set.normalize()
	if fold {
		set = t.fold(set)
	}
	if len(set) == 0 {
		if neg {
			t.out.WriteString(`[\x{0}-\x{10FFFF}]`)
		} else {
			t.out.WriteString(`[^\x{0}-\x{10FFFF}]`)
		}
		return
	}
	t.out.WriteByte('[')
	if neg {
		t.out.WriteByte('^')
	}
	for _, r := range set {
		writeRune(&t.out, r[0])
		if r[1] != r[0] {
			t.out.WriteByte('-')
			writeRune(&t.out, r[1])
		}
	}
	t.out.WriteByte(']')
}

func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_') {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}

// maxCased bounds the code points that have any case mapping, so folding a
// wide range does not visit the whole of Unicode.
const maxCased = 0x1E943

// fold closes set under JavaScript's case-insensitive equivalence: two
// characters match when Canonicalize gives the same for both.
func (t *jsTranslator) fold(set jsSet) jsSet {
	out := append(jsSet(nil), set...)
	for _, r := range set {
		for c := r[0]; c <= r[1] && c <= maxCased; c++ {
			if unicode.SimpleFold(c) == c {
				continue
			}
			want := t.canon(c)
			for d := unicode.SimpleFold(c); d != c; d = unicode.SimpleFold(d) {
				if t.canon(d) == want {
					out = append(out, [2]rune{d, d})
				}
			}
		}
	}
	return out.normalize()
}

// canon is Canonicalize for a pattern without the u flag: the upper case of
// the character when that is a single code unit and does not map a
// non-ASCII character to an ASCII one; the character itself otherwise.
func (t *jsTranslator) canon(r rune) rune {
	if r > 0xFFFF {
		return r // two code units in JavaScript, neither of which has case
	}
	if v, ok := t.canonMem[r]; ok {
		return v
	}
	if t.canonMem == nil {
		t.canonMem = map[rune]rune{}
		t.upper = cases.Upper(language.Und)
	}
	v := r
	up := []rune(t.upper.String(string(r)))
	if len(up) == 1 && up[0] <= 0xFFFF && !(r >= 128 && up[0] < 128) {
		v = up[0]
	}
	t.canonMem[r] = v
	return v
}
