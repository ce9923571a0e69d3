package tools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// scriptTok is a token of TypeScript or JavaScript source, as much of one as
// finding definitions needs: identifiers and keywords ('i'), numbers ('n'),
// string, template and regular expression literals ('s'), punctuation
// ('p').
type scriptTok struct {
	s    string
	kind byte
	line int
}

// scriptRegexAfter are the tokens after which "/" starts a regular expression
// rather than a division.
var scriptRegexAfter = map[string]bool{"(": true, ",": true, "=": true, ":": true, "[": true, "!": true,
	"&": true, "|": true, "?": true, "{": true, "}": true, ";": true, "+": true, "-": true, "*": true,
	"%": true, "<": true, ">": true, "~": true, "^": true, "=>": true, "==": true, "===": true,
	"!=": true, "!==": true, "return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true}

// scriptTokens splits src into tokens, skipping comments. Quotes that do not
// close on their line are taken as text (an apostrophe in JSX text), since a
// JavaScript string cannot span lines.
func scriptTokens(src string) []scriptTok {
	var toks []scriptTok
	line := 1
	// templates holds, for each template literal whose ${...} is being
	// read, the brace depth at which that expression ends.
	var templates []int
	depth := 0
	i := 0
	emit := func(s string, kind byte, l int) { toks = append(toks, scriptTok{s, kind, l}) }
	// template reads a template literal's text from i up to its end or
	// the next "${", and reports which it found.
	template := func() (ended bool) {
		for i < len(src) {
			switch c := src[i]; {
			case c == '\\':
				if i+1 < len(src) && src[i+1] == '\n' {
					line++
				}
				i += 2
			case c == '`':
				i++
				return true
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				i += 2
				return false
			default:
				if c == '\n' {
					line++
				}
				i++
			}
		}
		return true
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(src) && src[j] == c {
				emit(src[i:j+1], 's', line)
				i = j + 1
			} else {
				emit(string(c), 'p', line) // not a string: text
				i++
			}
		case c == '`':
			start := line
			i++
			if template() {
				emit("`", 's', start)
			} else {
				emit("`", 's', start)
				templates = append(templates, depth)
			}
		case c == '/' && (len(toks) == 0 || scriptRegexAfter[toks[len(toks)-1].s]):
			j, class := i+1, false
			for j < len(src) && src[j] != '\n' {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '[' {
					class = true
				} else if src[j] == ']' {
					class = false
				} else if src[j] == '/' && !class {
					break
				}
				j++
			}
			if j < len(src) && src[j] == '/' {
				j++
				for j < len(src) && isIdentByte(src[j]) {
					j++
				}
				emit(src[i:j], 's', line)
				i = j
			} else {
				emit("/", 'p', line)
				i++
			}
		case isIdentStart(src, i) || c == '#' && i+1 < len(src) && isIdentStart(src, i+1):
			j := i + 1
			for j < len(src) {
				r, w := utf8.DecodeRuneInString(src[j:])
				if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) {
					break
				}
				j += w
			}
			emit(src[i:j], 'i', line)
			i = j
		case '0' <= c && c <= '9':
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.') {
				j++
			}
			emit(src[i:j], 'n', line)
			i = j
		default:
			op := string(c)
			for _, m := range []string{"===", "!==", "...", "=>", "==", "!=", "<=", ">=", "?."} {
				if strings.HasPrefix(src[i:], m) {
					op = m
					break
				}
			}
			if _, w := utf8.DecodeRuneInString(src[i:]); len(op) == 1 && w > 1 {
				op = src[i : i+w]
			}
			switch op {
			case "{":
				depth++
			case "}":
				if n := len(templates); n > 0 && templates[n-1] == depth {
					// The end of a template's ${...}: its text goes on.
					templates = templates[:n-1]
					i++
					if !template() {
						templates = append(templates, depth)
					}
					continue
				}
				depth--
			}
			emit(op, 'p', line)
			i += len(op)
		}
	}
	return toks
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isIdentStart(src string, i int) bool {
	r, _ := utf8.DecodeRuneInString(src[i:])
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// scriptModifiers may precede a declaration.
var scriptModifiers = map[string]bool{"export": true, "default": true, "declare": true, "async": true, "abstract": true}

// scriptMemberModifiers may precede a class member.
var scriptMemberModifiers = map[string]bool{"static": true, "public": true, "private": true, "protected": true,
	"readonly": true, "abstract": true, "override": true, "declare": true, "async": true, "accessor": true}

// scriptNoStatementEnd are keywords after which an expression goes on, so a line
// break after them does not end a statement.
var scriptNoStatementEnd = map[string]bool{"return": true, "typeof": true, "new": true, "in": true, "of": true,
	"instanceof": true, "extends": true, "implements": true, "as": true, "keyof": true, "yield": true,
	"await": true, "throw": true, "case": true, "export": true, "default": true, "declare": true,
	"async": true, "abstract": true, "static": true, "public": true, "private": true, "protected": true,
	"readonly": true, "override": true, "else": true, "do": true, "const": true, "let": true, "var": true,
	"function": true, "class": true, "type": true, "interface": true, "enum": true, "namespace": true,
	"module": true, "import": true}

// scriptLeads are tokens that continue the expression of the line before.
var scriptLeads = map[string]bool{".": true, "?.": true, "?": true, ":": true, "|": true, "&": true,
	"=>": true, "+": true, "-": true, "*": true, "/": true, "%": true, "=": true, "==": true, "===": true,
	"!=": true, "!==": true, "<": true, ">": true, "<=": true, ">=": true, ",": true, ")": true, "]": true,
	"}": true, "as": true, "satisfies": true, "extends": true, "in": true, "instanceof": true}

type scriptScan struct {
	toks  []scriptTok
	match []int // for each bracket, the index of its partner; -1 when unmatched
	defs  []definition
}

// scriptDefinitions finds the definitions of a TypeScript or JavaScript file.
func scriptDefinitions(src string) []definition {
	s := &scriptScan{toks: scriptTokens(src)}
	s.pair()
	var stack []int // open braces
	classBody := map[int]bool{}
	for i, t := range s.toks {
		if t.kind == 'p' {
			switch t.s {
			case "{":
				stack = append(stack, i)
				continue
			case "}":
				if n := len(stack); n > 0 {
					stack = stack[:n-1]
				}
				continue
			}
		}
		if !s.statementStart(i) {
			continue
		}
		if n := len(stack); n > 0 && classBody[stack[n-1]] {
			s.member(i)
			continue
		}
		if body := s.declaration(i); body >= 0 {
			classBody[body] = true
		}
	}
	return s.defs
}

// pair matches brackets.
func (s *scriptScan) pair() {
	s.match = make([]int, len(s.toks))
	var open []int
	closes := map[string]string{")": "(", "]": "[", "}": "{"}
	for i, t := range s.toks {
		s.match[i] = -1
		if t.kind != 'p' {
			continue
		}
		switch t.s {
		case "(", "[", "{":
			open = append(open, i)
		case ")", "]", "}":
			// Pop to the nearest opener of the right kind: a stray
			// closer must not unbalance everything after it.
			for k := len(open) - 1; k >= 0; k-- {
				if s.toks[open[k]].s == closes[t.s] {
					s.match[open[k]], s.match[i] = i, open[k]
					open = open[:k]
					break
				}
			}
		}
	}
}

func (s *scriptScan) at(i int) string {
	if i < 0 || i >= len(s.toks) {
		return ""
	}
	return s.toks[i].s
}

func (s *scriptScan) isIdent(i int) bool { return i >= 0 && i < len(s.toks) && s.toks[i].kind == 'i' }

// statementStart reports whether token i can begin a statement or member:
// it follows ";", "{" or "}", or the line before ended a statement.
func (s *scriptScan) statementStart(i int) bool {
	if i == 0 {
		return true
	}
	p := s.toks[i-1]
	if p.kind == 'p' && (p.s == ";" || p.s == "{" || p.s == "}") {
		return true
	}
	if p.line >= s.toks[i].line {
		return false
	}
	switch p.kind {
	case 'i':
		return !scriptNoStatementEnd[p.s]
	case 'n', 's':
		return true
	}
	return p.s == ")" || p.s == "]"
}

func (s *scriptScan) add(from, to int) {
	if from >= 0 && to >= from && to < len(s.toks) {
		s.defs = append(s.defs, definition{s.toks[from].line, s.toks[to].line})
	}
}

// body finds the "{" of a body after token i, before the statement ends,
// skipping the object types of a return type (": {a: T} {").
func (s *scriptScan) body(i int) int {
	for k := i; k < len(s.toks); k++ {
		switch t := s.toks[k]; {
		case t.kind != 'p':
		case t.s == ";":
			return -1
		case t.s == "(" || t.s == "[":
			if s.match[k] < 0 {
				return -1
			}
			k = s.match[k]
		case t.s == "{":
			switch s.at(k - 1) {
			case ":", "<", "|", "&", ",":
				// An object type in a return type: Promise<{ok: boolean}>.
				if s.match[k] < 0 {
					return -1
				}
				k = s.match[k]
				continue
			}
			return k
		case t.s == "}" || t.s == ")" || t.s == "]":
			return -1
		}
	}
	return -1
}

// block records a definition from token from to the "}" matching the body
// found after token i, and returns the body's "{".
func (s *scriptScan) block(from, i int) int {
	b := s.body(i)
	if b < 0 || s.match[b] < 0 {
		return -1
	}
	s.add(from, s.match[b])
	return b
}

// exprEnd returns the last token of the expression starting at token i.
func (s *scriptScan) exprEnd(i int) int {
	k := i
	for ; k < len(s.toks); k++ {
		t := s.toks[k]
		if t.kind == 'p' {
			switch t.s {
			case "(", "[", "{":
				if s.match[k] < 0 {
					return len(s.toks) - 1
				}
				k = s.match[k]
			case ")", "]", "}":
				return k - 1
			case ";", ",":
				return k
			}
		}
		if k+1 < len(s.toks) && s.toks[k+1].line > s.toks[k].line {
			if cur := s.toks[k]; cur.kind == 'p' && cur.s != ")" && cur.s != "]" && cur.s != "}" ||
				cur.kind == 'i' && scriptNoStatementEnd[cur.s] {
				continue
			}
			if !scriptLeads[s.toks[k+1].s] {
				return k
			}
		}
	}
	return len(s.toks) - 1
}

// declaration recognizes a declaration at token i and records it. It
// returns the "{" of a class body, so that its members are looked for, or -1.
func (s *scriptScan) declaration(i int) int {
	j := i
	for scriptModifiers[s.at(j)] && s.isIdent(j) {
		j++
	}
	switch s.at(j) {
	case "function":
		s.block(j, j)
	case "class":
		if b := s.block(j, j); b >= 0 {
			return b
		}
	case "interface", "enum":
		if s.isIdent(j + 1) {
			s.block(j, j)
		}
	case "namespace", "module":
		if s.isIdent(j+1) || s.toks[min(j+1, len(s.toks)-1)].kind == 's' {
			s.block(j, j)
		}
	case "global":
		if j > i && s.at(j+1) == "{" {
			s.block(j, j)
		}
	case "type":
		if s.isIdent(j+1) && (s.at(j+2) == "=" || s.at(j+2) == "<") {
			for k := j + 2; k < len(s.toks); k++ {
				if s.at(k) == "=" {
					s.add(j, s.exprEnd(k+1))
					break
				}
				if s.at(k) == ";" || s.toks[k].line > s.toks[j].line+20 {
					break
				}
			}
		}
	case "const", "let", "var":
		if s.at(j) == "const" && s.at(j+1) == "enum" {
			s.block(j, j+1)
			break
		}
		if s.isIdent(j+1) && (j == i || s.at(i) == "export" || s.at(i) == "declare") {
			s.variable(j, j+1)
		}
	case "describe", "it", "test":
		if j == i && s.at(j+1) == "(" && s.match[j+1] > 0 && s.toks[min(j+2, len(s.toks)-1)].kind == 's' {
			s.add(j, s.match[j+1])
		}
	}
	return -1
}

// variable records a variable whose value is a function or a class.
func (s *scriptScan) variable(from, name int) {
	k := name + 1
	// Skip a type annotation up to the "=".
	for ; k < len(s.toks) && s.at(k) != "="; k++ {
		switch s.at(k) {
		case "(", "[", "{":
			if s.match[k] < 0 {
				return
			}
			k = s.match[k]
		case ";", ",", ")", "]", "}":
			return
		}
		if s.toks[k].line > s.toks[name].line+5 {
			return
		}
	}
	if k >= len(s.toks) {
		return
	}
	s.value(from, k+1)
}

// value records the definition whose value starts at token v, if it is a
// function, an arrow function or a class.
func (s *scriptScan) value(from, v int) {
	if s.at(v) == "async" {
		v++
	}
	switch {
	case s.at(v) == "function" || s.at(v) == "class":
		s.block(from, v)
	case s.at(v) == "(" && s.match[v] > 0:
		if k := s.arrow(s.match[v] + 1); k >= 0 {
			s.arrowEnd(from, k)
		}
	case s.isIdent(v) && s.at(v+1) == "=>":
		s.arrowEnd(from, v+1)
	case s.at(v) == "<":
		// A generic arrow function: <T,>(x: T) => ...
		for k := v; k < len(s.toks) && s.toks[k].line <= s.toks[v].line+3; k++ {
			if s.at(k) == "(" && s.match[k] > 0 {
				if a := s.arrow(s.match[k] + 1); a >= 0 {
					s.arrowEnd(from, a)
				}
				return
			}
		}
	}
}

// arrow returns the "=>" that follows a parameter list ending before token
// k, past an optional return type, or -1.
func (s *scriptScan) arrow(k int) int {
	if s.at(k) == "=>" {
		return k
	}
	if s.at(k) != ":" {
		return -1
	}
	for ; k < len(s.toks); k++ {
		switch s.at(k) {
		case "=>":
			return k
		case "(", "[", "{":
			if s.match[k] < 0 {
				return -1
			}
			k = s.match[k]
		case ";", ")", "]", "}", "=":
			return -1
		}
	}
	return -1
}

// arrowEnd records an arrow function from token from whose "=>" is at k.
func (s *scriptScan) arrowEnd(from, k int) {
	if s.at(k+1) == "{" && s.match[k+1] > 0 {
		s.add(from, s.match[k+1])
		return
	}
	s.add(from, s.exprEnd(k+1))
}

// member recognizes a class member at token i: a method (constructor,
// accessors included) or a property.
func (s *scriptScan) member(i int) {
	j := i
	for (scriptMemberModifiers[s.at(j)] || s.at(j) == "*") && s.at(j+1) != "(" && s.at(j+1) != "=" && s.at(j+1) != ":" {
		j++
	}
	if (s.at(j) == "get" || s.at(j) == "set") && (s.isIdent(j+1) || s.at(j+1) == "[" || s.toks[min(j+1, len(s.toks)-1)].kind == 's') {
		j++
	}
	switch {
	case s.isIdent(j) || j < len(s.toks) && (s.toks[j].kind == 's' || s.toks[j].kind == 'n'):
		j++
	case s.at(j) == "[" && s.match[j] > 0:
		j = s.match[j] + 1
	default:
		return
	}
	if s.at(j) == "?" || s.at(j) == "!" {
		j++
	}
	if s.at(j) == "<" {
		for k := j; k < len(s.toks) && k < j+64; k++ {
			if s.at(k) == "(" {
				j = k
				break
			}
		}
	}
	switch s.at(j) {
	case "(":
		if s.match[j] > 0 {
			s.block(i, s.match[j]+1)
		}
	case "=":
		s.property(i, j+1)
	case ":":
		for k := j + 1; k < len(s.toks); k++ {
			switch s.at(k) {
			case "=":
				s.property(i, k+1)
				return
			case "(", "[", "{":
				if s.match[k] < 0 {
					return
				}
				k = s.match[k]
			case ";", ",", ")", "]", "}":
				return
			}
			if k+1 < len(s.toks) && s.toks[k+1].line > s.toks[k].line && !scriptLeads[s.at(k+1)] && s.toks[k].kind != 'p' {
				return
			}
		}
	}
}

// property records a class property whose initializer starts at token v.
func (s *scriptScan) property(from, v int) {
	before := len(s.defs)
	s.value(from, v)
	if len(s.defs) == before {
		s.add(from, s.exprEnd(v))
	}
}
