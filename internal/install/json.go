package install

import (
	"bytes"
	"encoding/json"
	"strings"
)

// jnode is a JSON value that keeps its object keys in file order, so that
// install can merge into a person's settings file and write it back with
// nothing of theirs moved or lost (encoding/json's maps would sort the keys).
// A value install does not change is written back as the exact text it was
// read from, whatever its layout; only the objects and arrays install edits
// are laid out anew.
type jnode struct {
	kind byte            // '{' object, '[' array, 'v' any other value
	keys []string        // object keys, in order
	vals []*jnode        // object values (parallel to keys), or array items
	raw  json.RawMessage // the value itself, for kind 'v'
	src  []byte          // the text an unchanged object or array was read from

	// Where a value read from a file is in it, so that an edited object is
	// written as its old text with the edits spliced in: comments and
	// layout outside the members install changes stay as they were.
	doc        []byte
	start, end int       // the value's span in doc
	orig       []jmember // an object's members as read
	tail       int       // where the text after an object's last member begins
	lead       []byte    // the document's text before its top-level value
	trail      []byte    // and after it
}

// jmember is an object member as read: its segment of the text runs from
// after the comma before it (or the brace) to the comma after it (or the
// end of its value, for the last one), comments included.
type jmember struct {
	key        string
	val        *jnode
	seg, until int
}

// jvalue makes a scalar node of v.
func jvalue(v any) *jnode {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return &jnode{kind: 'v', raw: bytes.TrimRight(b.Bytes(), "\n")}
}

func jobject() *jnode { return &jnode{kind: '{'} }

func jarray(items ...*jnode) *jnode { return &jnode{kind: '[', vals: items} }

func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces the value of key in place, or appends key at the end.
func (n *jnode) set(key string, v *jnode) *jnode {
	n.src = nil
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return n
		}
	}
	n.keys, n.vals = append(n.keys, key), append(n.vals, v)
	return n
}

func (n *jnode) del(key string) bool {
	for i, k := range n.keys {
		if k == key {
			n.delAt(i)
			return true
		}
	}
	return false
}

// pristine reports whether n and everything in it are as read.
func (n *jnode) pristine() bool {
	if n.kind == 'v' {
		return true
	}
	if n.src == nil {
		return false
	}
	for _, v := range n.vals {
		if !v.pristine() {
			return false
		}
	}
	return true
}

// delAt removes the i-th member or item.
func (n *jnode) delAt(i int) {
	n.src = nil
	if n.kind == '{' {
		n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
	}
	n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
}

// setItem replaces the i-th item or member value.
func (n *jnode) setItem(i int, v *jnode) {
	n.src = nil
	n.vals[i] = v
}

// setItems replaces all the items of an array.
func (n *jnode) setItems(items []*jnode) {
	n.src = nil
	n.vals = items
}

func (n *jnode) push(v *jnode) {
	n.src = nil
	n.vals = append(n.vals, v)
}

// str returns the node's string value, if it is a string.
func (n *jnode) str() (string, bool) {
	if n == nil || n.kind != 'v' {
		return "", false
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// equal compares two nodes as JSON, key order included.
func (n *jnode) equal(m *jnode) bool {
	if n == nil || m == nil {
		return n == m
	}
	if n.kind != m.kind || len(n.vals) != len(m.vals) || len(n.keys) != len(m.keys) {
		return false
	}
	if n.kind == 'v' {
		return bytes.Equal(n.raw, m.raw)
	}
	for i := range n.keys {
		if n.keys[i] != m.keys[i] {
			return false
		}
	}
	for i := range n.vals {
		if !n.vals[i].equal(m.vals[i]) {
			return false
		}
	}
	return true
}

// encodeJSONDoc writes n indented by unit per level, the way JSON.stringify
// and json.MarshalIndent do, ending with a newline if trailingNL.
//
// What the file held around its top-level value (comments) is kept.
func encodeJSONDoc(n *jnode, unit string, trailingNL bool) []byte {
	var b bytes.Buffer
	b.Write(n.lead)
	n.encode(&b, unit, 0)
	switch {
	case len(bytes.TrimSpace(n.trail)) > 0:
		b.Write(n.trail)
	case trailingNL:
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func (n *jnode) encode(b *bytes.Buffer, unit string, depth int) {
	switch {
	case n.kind == 'v':
		b.Write(n.raw)
		return
	case n.pristine():
		b.Write(n.src)
		return
	case n.kind == '{' && n.doc != nil:
		n.splice(b, unit, depth)
		return
	}
	open, closing := byte('{'), byte('}')
	if n.kind == '[' {
		open, closing = '[', ']'
	}
	b.WriteByte(open)
	if len(n.vals) == 0 {
		b.WriteByte(closing)
		return
	}
	for i, v := range n.vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(unit, depth+1))
		if n.kind == '{' {
			b.Write(jvalue(n.keys[i]).raw)
			b.WriteString(": ")
		}
		v.encode(b, unit, depth+1)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(unit, depth))
	b.WriteByte(closing)
}

// jsonStyle is how an existing file is laid out: its indent unit and
// whether it ends with a newline. A new file gets two spaces and a newline.
func jsonStyle(data []byte) (unit string, trailingNL bool) {
	unit, trailingNL = "  ", true
	if len(bytes.TrimSpace(data)) == 0 {
		return unit, trailingNL
	}
	trailingNL = bytes.HasSuffix(data, []byte("\n"))
	for _, line := range strings.Split(string(data), "\n")[1:] {
		t := strings.TrimLeft(line, " \t")
		if t == "" || len(t) == len(line) {
			continue
		}
		return line[:len(line)-len(t)], trailingNL
	}
	return unit, trailingNL
}
