package orchestration

// This file keeps CanonView.Read as it was before it was made faster (the
// parser of commit 1b81acc, renamed): FuzzCanonViewReadRef holds the fast
// reader to it, line for line, so that making Read cheaper never changes
// which lines it accepts nor what it reads from them. One change is
// deliberate and made here too: a denial nested deeper than compactDepth is
// no longer read fast (the old reader accepted some that ParseRecord
// refuses for their depth; TestCanonDenialNesting).

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// refRead is CanonView.Read as it was.
func refRead(v *CanonView, line []byte) bool {
	p := refParser{b: line, v: v}
	p.record()
	return p.ok && p.i == len(p.b)
}

func FuzzCanonViewReadRef(f *testing.F) {
	for _, line := range canonicalSamples(f) {
		f.Add(line)
	}
	for _, line := range benchLedgerLines(f, 24) {
		f.Add(line)
	}
	f.Add([]byte(`{"version":"0.1.0","id":"00000000-0000-0000-0000-000000000000","timestamp":"2026-01-01T00:00:00Z","files":[]}`))
	var fast CanonView
	f.Fuzz(func(t *testing.T, line []byte) {
		var slow CanonView
		want := refRead(&slow, line)
		got := fast.Read(line)
		if got != want {
			t.Fatalf("Read = %v, the reference says %v: %q", got, want, line)
		}
		if got && !reflect.DeepEqual(canonViewFields(&fast), canonViewFields(&slow)) {
			t.Fatalf("Read and the reference read different views of %q:\n%#v\n%#v", line, fast, slow)
		}
	})
}

// canonViewFields is v without its slices' spare capacity, for comparing.
func canonViewFields(v *CanonView) CanonView {
	w := *v
	w.Files = append([]CanonFile{}, v.Files...)
	w.Convs = append([]CanonConv{}, v.Convs...)
	w.Ranges = append([]CanonRange{}, v.Ranges...)
	w.Related = append([]CanonRelated{}, v.Related...)
	return w
}

type refParser struct {
	b  []byte
	i  int
	ok bool
	v  *CanonView
}

func (p *refParser) fail() { p.ok = false }

// lit consumes s, or fails.
func (p *refParser) lit(s string) bool {
	if !p.ok || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		p.ok = false
		return false
	}
	p.i += len(s)
	return true
}

// peek reports whether s comes next, without consuming it.
func (p *refParser) peek(s string) bool {
	return p.ok && len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s
}

// str reads a string as the encoder writes one that needs no escape: no
// backslash, no control character, valid UTF-8 and no U+2028 or U+2029
// (which the encoder escapes). The result is never nil when p.ok.
func (p *refParser) str() []byte {
	if !p.lit(`"`) {
		return nil
	}
	start := p.i
	b := p.b
	i := p.i
	// Eight bytes at a time while none is special (a quote, a backslash,
	// a control character or a byte of a multi-byte character).
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if x&refSwarHigh|refSwarLess(x, 0x20)|refSwarZero(x^(refSwarOnes*'"'))|refSwarZero(x^(refSwarOnes*'\\')) != 0 {
			break
		}
		i += 8
	}
	for i < len(b) {
		c := b[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			p.i = i + 1
			return b[start:i:i]
		case c < utf8.RuneSelf: // a backslash or a control character
			p.fail()
			return nil
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				p.fail()
				return nil
			}
			i += n
		}
	}
	p.fail()
	return nil
}

const (
	refSwarOnes = 0x0101010101010101
	refSwarHigh = 0x8080808080808080
)

// refSwarZero is non-zero when some byte of x is zero.
func refSwarZero(x uint64) uint64 { return (x - refSwarOnes) &^ x & refSwarHigh }

// refSwarLess is non-zero when some byte of x is less than n (n <= 128).
func refSwarLess(x uint64, n byte) uint64 { return (x - refSwarOnes*uint64(n)) &^ x & refSwarHigh }

// nonEmpty reads a string that must not be empty.
func (p *refParser) nonEmpty() []byte {
	s := p.str()
	if len(s) == 0 {
		p.fail()
	}
	return s
}

// opt reads `,"key":` and a non-empty string when they come next.
func (p *refParser) opt(key string) []byte {
	if p.ok && len(p.b)-p.i >= len(key)+4 && p.b[p.i] == ',' && p.b[p.i+1] == '"' &&
		string(p.b[p.i+2:p.i+2+len(key)]) == key && p.b[p.i+2+len(key)] == '"' && p.b[p.i+3+len(key)] == ':' {
		p.i += len(key) + 4
		return p.nonEmpty()
	}
	return nil
}

// num reads an integer as the encoder writes it.
func (p *refParser) num() int {
	if !p.ok {
		return 0
	}
	start, neg := p.i, false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	d := p.i
	v := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		if p.i-d >= 18 { // beyond what fits without care
			p.fail()
			return 0
		}
		v = v*10 + int(p.b[p.i]-'0')
		p.i++
	}
	n := p.i - d
	if n == 0 || (n > 1 && p.b[d] == '0') || (neg && v == 0) {
		p.i = start
		p.fail()
		return 0
	}
	if neg {
		v = -v
	}
	return v
}

func (p *refParser) record() {
	p.ok = true
	v := p.v
	*v = CanonView{Files: v.Files[:0], Convs: v.Convs[:0], Ranges: v.Ranges[:0], Related: v.Related[:0]}
	p.lit(`{"version":`)
	v.Version = p.nonEmpty()
	p.lit(`,"id":`)
	v.ID = p.str()
	if !uuidText(v.ID) {
		p.fail()
	}
	p.lit(`,"timestamp":`)
	v.Timestamp = p.str()
	if !p.ok || !canonTimestamp(v.Timestamp) {
		p.fail()
		return
	}
	if p.peek(`,"vcs":`) {
		p.lit(`,"vcs":{"type":`)
		v.HasVCS = true
		v.VCSType = p.nonEmpty()
		p.lit(`,"revision":`)
		v.VCSRevision = p.str()
		p.lit(`}`)
	}
	if p.peek(`,"tool":`) {
		p.lit(`,"tool":{"name":`)
		v.HasTool = true
		v.ToolName = p.str()
		p.lit(`,"version":`)
		v.ToolVersion = p.str()
		p.lit(`}`)
	}
	p.lit(`,"files":[`)
	for p.ok && !p.peek(`]`) {
		if len(v.Files) > 0 {
			p.lit(`,`)
		}
		p.file()
	}
	p.lit(`]`)
	if p.peek(`,"metadata":`) {
		p.lit(`,"metadata":{"` + MetaKey + `":`)
		p.meta()
		p.lit(`}`)
	}
	p.lit(`}`)
}

func (p *refParser) file() {
	v := p.v
	p.lit(`{"path":`)
	f := CanonFile{Path: p.nonEmpty(), ConvFrom: len(v.Convs)}
	p.lit(`,"conversations":[`)
	for p.ok && !p.peek(`]`) {
		if len(v.Convs) > f.ConvFrom {
			p.lit(`,`)
		}
		p.conversation()
	}
	p.lit(`]}`)
	f.ConvTo = len(v.Convs)
	v.Files = append(v.Files, f)
}

func (p *refParser) conversation() {
	v := p.v
	var c CanonConv
	p.lit(`{`)
	sep := ""
	if p.peek(`"url":`) {
		p.lit(`"url":`)
		c.URL = p.nonEmpty()
		sep = ","
	}
	if p.peek(sep + `"contributor":`) {
		p.lit(sep + `"contributor":{"type":`)
		c.HasContributor = true
		c.ContribType = p.str()
		switch string(c.ContribType) { // ParseRecord lowercases; these are the lowercase values
		case "human", "ai", "mixed", "unknown":
		default:
			p.fail()
		}
		c.ModelID = p.opt("model_id")
		p.lit(`}`)
		sep = ","
	}
	p.lit(sep + `"ranges":[`)
	c.RangeFrom = len(v.Ranges)
	for p.ok && !p.peek(`]`) {
		if len(v.Ranges) > c.RangeFrom {
			p.lit(`,`)
		}
		var r CanonRange
		p.lit(`{"start_line":`)
		r.StartLine = p.num()
		p.lit(`,"end_line":`)
		r.EndLine = p.num()
		if r.StartLine < 1 || r.EndLine < r.StartLine {
			p.fail()
		}
		r.ContentHash = p.opt("content_hash")
		p.lit(`}`)
		v.Ranges = append(v.Ranges, r)
	}
	c.RangeTo = len(v.Ranges)
	p.lit(`]`)
	c.RelFrom = len(v.Related)
	if p.peek(`,"related":[`) {
		p.lit(`,"related":[`)
		for p.ok && !p.peek(`]`) {
			if len(v.Related) > c.RelFrom {
				p.lit(`,`)
			}
			p.lit(`{"type":`)
			r := CanonRelated{Type: p.str()}
			p.lit(`,"url":`)
			r.URL = p.str()
			p.lit(`}`)
			v.Related = append(v.Related, r)
		}
		p.lit(`]`)
		if len(v.Related) == c.RelFrom { // the writer omits an empty list
			p.fail()
		}
	}
	c.RelTo = len(v.Related)
	p.lit(`}`)
	v.Convs = append(v.Convs, c)
}

func (p *refParser) meta() {
	v := p.v
	v.HasMeta = true
	p.lit(`{"intent":`)
	v.Intent = p.str()
	p.lit(`,"session":`)
	v.Session = p.str()
	p.lit(`,"call_id":`)
	v.CallID = p.str()
	p.lit(`,"tool":`)
	v.Tool = p.str()
	v.Command = p.opt("command")
	v.Agent = p.opt("agent")
	p.lit(`,"mutation":`)
	v.Mutation = p.str()
	p.lit(`,"decision":`)
	v.Decision = p.str()
	v.BeforeSHA256 = p.opt("before_sha256")
	v.AfterSHA256 = p.opt("after_sha256")
	if p.peek(`,"deleted_lines":`) {
		p.lit(`,"deleted_lines":`)
		if v.DeletedLines = p.num(); v.DeletedLines == 0 {
			p.fail()
		}
	}
	if p.peek(`,"denial":`) {
		p.lit(`,"denial":`)
		v.Denial = p.compactObject()
	}
	v.Recovered = p.opt("recovered")
	p.lit(`,"prev":`)
	v.Prev = p.str()
	p.lit(`}`)
}

// compactObject reads a JSON object with no whitespace between its tokens
// and no escapes in its strings (what the encoder writes of a compacted
// denial) and returns its bytes.
func (p *refParser) compactObject() []byte {
	if !p.peek(`{`) {
		p.fail()
		return nil
	}
	start, depth := p.i, 0
	for p.ok && p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			p.str()
			continue
		case '{', '[':
			if depth++; depth > compactDepth { // the one deliberate change
				p.fail()
				return nil
			}
		case '}', ']':
			depth--
		case ' ', '\t', '\n', '\r':
			p.fail()
			return nil
		}
		p.i++
		if depth == 0 {
			v := p.b[start:p.i:p.i]
			if !json.Valid(v) {
				p.fail()
				return nil
			}
			return v
		}
	}
	p.fail()
	return nil
}

// TestCanonDenialNesting reads denials nested around and beyond the depth
// the fast reader checks itself (and json.Valid's own limit): Read agrees
// with the reference and with ParseRecord at every depth.
func TestCanonDenialNesting(t *testing.T) {
	line := canonicalSamples(t)[1]
	const marker = `"n":[1,2.5e3]`
	if !bytes.Contains(line, []byte(marker)) {
		t.Fatalf("no %s in the sample: %s", marker, line)
	}
	for _, d := range []int{0, 1, 31, 32, 33, 100, 9999, 10000, 10001} {
		for _, inner := range []string{"", "1", `"x"`, "{}", `{"a":null}`, "1,", "tru"} {
			nest := strings.Repeat("[", d) + inner + strings.Repeat("]", d)
			b := bytes.Replace(line, []byte(marker), []byte(`"n":`+nest), 1)
			var fast, slow CanonView
			got, want := fast.Read(b), refRead(&slow, b)
			if got != want {
				t.Fatalf("depth %d, %q inside: Read = %v, the reference says %v", d, inner, got, want)
			}
			if got && !reflect.DeepEqual(canonViewFields(&fast), canonViewFields(&slow)) {
				t.Fatalf("depth %d, %q inside: views differ", d, inner)
			}
			if got != checkCanonical(t, b) {
				t.Fatalf("depth %d: ParseCanonical disagrees with Read", d)
			}
			if d == 1 && inner == "1" && !got {
				t.Fatalf("a plain nested denial is not read fast: %s", b)
			}
			if d >= compactDepth && got {
				t.Fatalf("depth %d read fast", d)
			}
		}
	}
}
