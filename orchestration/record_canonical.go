package orchestration

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// ParseCanonical is the fast reader of the lines intentgate's own writer
// makes. It reads a line only when the line is exactly what MarshalShape
// (ShapeAgentTrace) writes for the record it denotes: keys in the writer's
// order, no whitespace, strings without escapes, the metadata holding only
// dev.intentgate, no per-range contributor. For such a line it returns the
// record ParseRecord would return, and MarshalShape of that record is the
// line again (FuzzParseCanonical holds it to both). Any other line, valid
// or not, returns false and is left to ParseRecord: it never says no to a
// record, only "not mine to read fast".
func ParseCanonical(line []byte) (*Record, bool) {
	p := canonParser{b: line}
	rec := p.record()
	if !p.ok || p.i != len(p.b) {
		return nil, false
	}
	return rec, true
}

type canonParser struct {
	b  []byte
	i  int
	ok bool
}

func (p *canonParser) fail() { p.ok = false }

// lit consumes s, or fails.
func (p *canonParser) lit(s string) bool {
	if !p.ok || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		p.ok = false
		return false
	}
	p.i += len(s)
	return true
}

// peek reports whether s comes next, without consuming it.
func (p *canonParser) peek(s string) bool {
	return p.ok && len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s
}

// str reads a string as the encoder writes one that needs no escape: no
// backslash, no control character, valid UTF-8 and no U+2028 or U+2029
// (which the encoder escapes).
func (p *canonParser) str() string {
	if !p.lit(`"`) {
		return ""
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return string(s)
		case c == '\\' || c < 0x20:
			p.fail()
			return ""
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				p.fail()
				return ""
			}
			p.i += n
		}
	}
	p.fail()
	return ""
}

// nonEmpty reads a string that must not be empty.
func (p *canonParser) nonEmpty() string {
	s := p.str()
	if s == "" {
		p.fail()
	}
	return s
}

// num reads an integer as the encoder writes it.
func (p *canonParser) num() int {
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

func (p *canonParser) record() *Record {
	p.ok = true
	rec := &Record{}
	p.lit(`{"version":`)
	rec.Version = p.nonEmpty()
	p.lit(`,"id":`)
	rec.ID = p.str()
	if !uuidText(rec.ID) {
		p.fail()
	}
	p.lit(`,"timestamp":`)
	ts := p.str()
	if !p.ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		p.fail()
		return nil
	}
	rec.Timestamp = t.UTC()
	if y := rec.Timestamp.Year(); y < 0 || y > 9999 || rec.Timestamp.Format(time.RFC3339Nano) != ts {
		p.fail()
		return nil
	}
	if p.peek(`,"vcs":`) {
		p.lit(`,"vcs":{"type":`)
		v := &VCS{Type: p.nonEmpty()}
		p.lit(`,"revision":`)
		v.Revision = p.str()
		p.lit(`}`)
		rec.VCS = v
	}
	if p.peek(`,"tool":`) {
		p.lit(`,"tool":{"name":`)
		t := &TraceTool{Name: p.str()}
		p.lit(`,"version":`)
		t.Version = p.str()
		p.lit(`}`)
		rec.Tool = t
	}
	p.lit(`,"files":[`)
	rec.Files = []TraceFile{}
	for p.ok && !p.peek(`]`) {
		if len(rec.Files) > 0 {
			p.lit(`,`)
		}
		rec.Files = append(rec.Files, p.file())
	}
	p.lit(`]`)
	if p.peek(`,"metadata":`) {
		p.lit(`,"metadata":{"` + MetaKey + `":`)
		rec.Meta = p.meta()
		p.lit(`}`)
	}
	p.lit(`}`)
	if !p.ok {
		return nil
	}
	return rec
}

func (p *canonParser) file() TraceFile {
	p.lit(`{"path":`)
	f := TraceFile{Path: p.nonEmpty(), Conversations: []TraceConversation{}}
	p.lit(`,"conversations":[`)
	for p.ok && !p.peek(`]`) {
		if len(f.Conversations) > 0 {
			p.lit(`,`)
		}
		f.Conversations = append(f.Conversations, p.conversation())
	}
	p.lit(`]}`)
	return f
}

func (p *canonParser) conversation() TraceConversation {
	var c TraceConversation
	p.lit(`{`)
	sep := ""
	if p.peek(`"url":`) {
		p.lit(`"url":`)
		c.URL = p.nonEmpty()
		sep = ","
	}
	if p.peek(sep + `"contributor":`) {
		p.lit(sep + `"contributor":{"type":`)
		ct := &TraceContributor{Type: p.str()}
		switch ct.Type { // ParseRecord lowercases; these are the lowercase values
		case "human", "ai", "mixed", "unknown":
		default:
			p.fail()
		}
		if p.peek(`,"model_id":`) {
			p.lit(`,"model_id":`)
			ct.ModelID = p.nonEmpty()
		}
		p.lit(`}`)
		c.Contributor = ct
		sep = ","
	}
	p.lit(sep + `"ranges":[`)
	c.Ranges = []Range{}
	for p.ok && !p.peek(`]`) {
		if len(c.Ranges) > 0 {
			p.lit(`,`)
		}
		var r Range
		p.lit(`{"start_line":`)
		r.StartLine = p.num()
		p.lit(`,"end_line":`)
		r.EndLine = p.num()
		if r.StartLine < 1 || r.EndLine < r.StartLine {
			p.fail()
		}
		if p.peek(`,"content_hash":`) {
			p.lit(`,"content_hash":`)
			r.ContentHash = p.nonEmpty()
		}
		p.lit(`}`)
		c.Ranges = append(c.Ranges, r)
	}
	p.lit(`]`)
	if p.peek(`,"related":[`) {
		p.lit(`,"related":[`)
		for p.ok && !p.peek(`]`) {
			if len(c.Related) > 0 {
				p.lit(`,`)
			}
			p.lit(`{"type":`)
			r := TraceRelated{Type: p.str()}
			p.lit(`,"url":`)
			r.URL = p.str()
			p.lit(`}`)
			c.Related = append(c.Related, r)
		}
		p.lit(`]`)
		if len(c.Related) == 0 { // the writer omits an empty list
			p.fail()
		}
	}
	p.lit(`}`)
	return c
}

func (p *canonParser) meta() *Meta {
	m := &Meta{}
	p.lit(`{"intent":`)
	m.Intent = p.str()
	p.lit(`,"session":`)
	m.Session = p.str()
	p.lit(`,"call_id":`)
	m.CallID = p.str()
	p.lit(`,"tool":`)
	m.Tool = p.str()
	opt := func(key string) string {
		if p.peek(`,"` + key + `":`) {
			p.lit(`,"` + key + `":`)
			return p.nonEmpty()
		}
		return ""
	}
	m.Command = opt("command")
	m.Agent = opt("agent")
	p.lit(`,"mutation":`)
	m.Mutation = p.str()
	p.lit(`,"decision":`)
	m.Decision = p.str()
	m.BeforeSHA256 = opt("before_sha256")
	m.AfterSHA256 = opt("after_sha256")
	if p.peek(`,"deleted_lines":`) {
		p.lit(`,"deleted_lines":`)
		if m.DeletedLines = p.num(); m.DeletedLines == 0 {
			p.fail()
		}
	}
	if p.peek(`,"denial":`) {
		p.lit(`,"denial":`)
		m.Denial = p.compactObject()
	}
	m.Recovered = opt("recovered")
	p.lit(`,"prev":`)
	m.Prev = p.str()
	p.lit(`}`)
	return m
}

// compactObject reads a JSON object with no whitespace between its tokens
// and no escapes in its strings (what the encoder writes of a compacted
// denial) and returns a copy of its bytes.
func (p *canonParser) compactObject() json.RawMessage {
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
			depth++
		case '}', ']':
			depth--
		case ' ', '\t', '\n', '\r':
			p.fail()
			return nil
		}
		p.i++
		if depth == 0 {
			v := p.b[start:p.i]
			if !json.Valid(v) {
				p.fail()
				return nil
			}
			return bytes.Clone(v)
		}
	}
	p.fail()
	return nil
}

// uuidText reports whether s is a UUID in its 36-character text form.
func uuidText(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
