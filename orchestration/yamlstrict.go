package orchestration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlPos is one problem in a strictly parsed YAML file, with its position.
// IntentsError and ModesError are this type.
type yamlPos struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *yamlPos) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// yamlErrors is every problem found in one file, in file order, so that a
// person can fix them all in one edit. IntentsErrors and ModesErrors are this
// type.
type yamlErrors []*yamlPos

func (es yamlErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find an individual *yamlPos.
func (es yamlErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// yamlParser collects the problems of one strictly parsed YAML file.
type yamlParser struct {
	file string
	errs yamlErrors
}

func (p *yamlParser) at(line, col int, format string, args ...any) {
	p.errs = append(p.errs, &yamlPos{File: p.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

func (p *yamlParser) errorf(n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	p.at(line, col, format, args...)
}

// sorted returns the problems ordered by position, keeping the order of those
// at the same position.
func (p *yamlParser) sorted() yamlErrors {
	sort.SliceStable(p.errs, func(i, j int) bool {
		a, b := p.errs[i], p.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return p.errs
}

// syntax records a YAML syntax error. The YAML library reports the position
// of those only in the text ("yaml: line 3: ..."), and without a column.
func (p *yamlParser) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil && line > 0 {
				p.at(line, 0, "invalid YAML: %s", text)
				return
			}
		}
	}
	p.at(1, 1, "invalid YAML: %s", msg)
}

// decode decodes the single YAML document of data and returns its root node,
// or nil when there is none. ok is false when the first document does not
// parse; a second document is recorded as a problem.
func (p *yamlParser) decode(data []byte) (root *yaml.Node, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		p.syntax(err)
		return nil, false
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p.errorf(&extra, "a second YAML document is not allowed")
	case !errors.Is(err, io.EOF):
		p.syntax(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, true
	}
	return doc.Content[0], true
}

// pairs walks a mapping's key/value pairs, reporting duplicate and
// non-string keys; fn sees each distinct string key once.
func (p *yamlParser) pairs(m *yaml.Node, where string, fn func(key string, k, v *yaml.Node)) {
	seen := make(map[string]int)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			p.errorf(k, "keys must be strings%s, got %s", where, intentsDescribe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errorf(k, "duplicate key %q%s (first at line %d)", k.Value, where, first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// str decodes a required, non-empty string scalar. k is the key the value
// belongs to: an omitted value ("name:") is reported at its key, since the
// null node it leaves sits at the end of the line.
func (p *yamlParser) str(k, v *yaml.Node, field, label string) (string, bool) {
	s, ok := p.optStr(k, v, field, label)
	if ok && s == "" {
		p.errorf(intentsWhere(k, v), "empty %s in %s", field, label)
		return "", false
	}
	return s, ok
}

// optStr decodes a string that may be empty or null.
func (p *yamlParser) optStr(k, v *yaml.Node, field, label string) (string, bool) {
	switch {
	case v.Kind == yaml.AliasNode:
		p.errorf(v, "%s in %s: YAML aliases are not supported", field, label)
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		return "", true
	case v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str":
		hint := ""
		switch v.ShortTag() {
		case "!!int", "!!float", "!!bool", "!!timestamp":
			hint = " (quote it to make it a string)"
		}
		p.errorf(v, "%s in %s must be a string, got %s%s", field, label, intentsDescribe(v), hint)
	default:
		return v.Value, true
	}
	return "", false
}
