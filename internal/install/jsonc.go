package install

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The settings files install merges into are JSON, and Gemini CLI's may hold
// comments (// to the end of the line, /* ... */), which Gemini accepts. The
// parser keeps, for every object, where its members are in the text, so that
// install writes back the person's text with only its own members changed.
// Trailing commas are refused: not every agent accepts them.

type jsoncParser struct {
	data []byte
	pos  int
}

// jsoncError says where in the file parsing stopped, as line:column.
func (p *jsoncParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.data[:min(p.pos, len(p.data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

// parseJSONDoc reads a settings document: JSON, with comments allowed.
func parseJSONDoc(data []byte) (*jnode, error) {
	p := &jsoncParser{data: data}
	if bytes.HasPrefix(data, []byte("\uFEFF")) {
		p.pos = 3
	}
	if err := p.trivia(); err != nil {
		return nil, err
	}
	leadEnd := p.pos
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	end := p.pos
	if err := p.trivia(); err != nil {
		return nil, err
	}
	if p.pos < len(data) {
		return nil, p.errorf("unexpected %q after the top-level value", data[p.pos])
	}
	n.lead, n.trail = data[:leadEnd], data[end:]
	return n, nil
}

// trivia skips whitespace and comments.
func (p *jsoncParser) trivia() error {
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case c == '/' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '/':
			i := bytes.IndexByte(p.data[p.pos:], '\n')
			if i < 0 {
				p.pos = len(p.data)
			} else {
				p.pos += i + 1
			}
		case c == '/' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '*':
			i := bytes.Index(p.data[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errorf("a /* comment is not closed")
			}
			p.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

// maxJSONDepth bounds nesting, so that a hostile file cannot exhaust the
// stack.
const maxJSONDepth = 200

func (p *jsoncParser) value(depth int) (*jnode, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nested more than %d levels deep", maxJSONDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of the file, a value was expected")
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		if err := p.str(); err != nil {
			return nil, err
		}
	default:
		for p.pos < len(p.data) && bytes.IndexByte([]byte("+-0123456789.eEtruefalsn"), p.data[p.pos]) >= 0 {
			p.pos++
		}
	}
	raw := p.data[start:p.pos]
	if len(raw) == 0 || !json.Valid(raw) {
		p.pos = start
		return nil, p.errorf("invalid value %q", string(raw[:min(len(raw), 20)]))
	}
	return &jnode{kind: 'v', raw: json.RawMessage(raw), doc: p.data, start: start, end: p.pos}, nil
}

func (p *jsoncParser) str() error {
	p.pos++ // the opening quote
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			p.pos += 2
		case c < 0x20:
			return p.errorf("a control character in a string")
		default:
			p.pos++
		}
	}
	return p.errorf("a string is not closed")
}

func (p *jsoncParser) object(depth int) (*jnode, error) {
	n := &jnode{kind: '{', doc: p.data, start: p.pos}
	p.pos++ // {
	for {
		seg := p.pos
		if err := p.trivia(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			if len(n.orig) > 0 {
				return nil, p.errorf("a comma before } (trailing commas are not JSON)")
			}
			n.tail = seg
			p.pos++
			break
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("an object key (a string in double quotes) was expected")
		}
		ks := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		var k string
		if err := json.Unmarshal(p.data[ks:p.pos], &k); err != nil {
			p.pos = ks
			return nil, p.errorf("invalid key: %v", err)
		}
		if n.get(k) != nil {
			p.pos = ks
			return nil, p.errorf("duplicate key %q", k)
		}
		if err := p.trivia(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("a colon after the key %q was expected", k)
		}
		p.pos++
		if err := p.trivia(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		valueEnd := p.pos
		n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		if err := p.trivia(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			n.orig = append(n.orig, jmember{key: k, val: v, seg: seg, until: p.pos})
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			n.orig = append(n.orig, jmember{key: k, val: v, seg: seg, until: valueEnd})
			n.tail = valueEnd
			p.pos++
			break
		}
		return nil, p.errorf("a comma or } was expected after the value of %q", k)
	}
	n.end = p.pos
	n.src = p.data[n.start:n.end]
	return n, nil
}

func (p *jsoncParser) array(depth int) (*jnode, error) {
	n := &jnode{kind: '[', doc: p.data, start: p.pos}
	p.pos++ // [
	for {
		if err := p.trivia(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			if len(n.vals) > 0 {
				return nil, p.errorf("a comma before ] (trailing commas are not JSON)")
			}
			p.pos++
			break
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		if err := p.trivia(); err != nil {
			return nil, err
		}
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			break
		}
		return nil, p.errorf("a comma or ] was expected")
	}
	n.end = p.pos
	n.src = p.data[n.start:n.end]
	return n, nil
}

// splice writes an edited object read from a file: its text as read, with
// the members install changed written anew, the ones it removed left out
// and the ones it added appended.
func (n *jnode) splice(b *bytes.Buffer, unit string, depth int) {
	b.WriteByte('{')
	first := true
	seen := map[string]bool{}
	for _, m := range n.orig {
		cur := n.get(m.key)
		if cur == nil {
			continue // removed
		}
		seen[m.key] = true
		if !first {
			b.WriteByte(',')
		}
		first = false
		if cur == m.val && cur.pristine() {
			b.Write(n.doc[m.seg:m.until])
			continue
		}
		b.Write(n.doc[m.seg:m.val.start])
		cur.encode(b, unit, depth+1)
		b.Write(n.doc[m.val.end:m.until])
	}
	added := false
	for i, k := range n.keys {
		if seen[k] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first, added = false, true
		b.WriteByte('\n')
		b.WriteString(indentOf(unit, depth+1))
		b.Write(jvalue(k).raw)
		b.WriteString(": ")
		n.vals[i].encode(b, unit, depth+1)
	}
	tail := n.doc[n.tail : n.end-1]
	if first {
		// Nothing left: the object's inside is its comments, if any.
		if len(bytes.TrimSpace(tail)) > 0 {
			b.Write(tail)
		}
		b.WriteByte('}')
		return
	}
	if added && !bytes.Contains(tail, []byte("\n")) {
		b.Write(tail)
		b.WriteByte('\n')
		b.WriteString(indentOf(unit, depth))
	} else {
		b.Write(tail)
	}
	b.WriteByte('}')
}

func indentOf(unit string, depth int) string {
	var b bytes.Buffer
	for range depth {
		b.WriteString(unit)
	}
	return b.String()
}
