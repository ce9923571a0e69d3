package engine

import "encoding/json"

// SplitObject splits the JSON object raw into its members in one pass,
// without copying the values (they alias raw), as splitArgs does for
// arguments, for a front door reading a call: each member's value must be a
// string or an object whose values are strings (the shape of a call line,
// whose "args" hold a 64 KiB content). ok is false for anything else, for a
// key given twice, and for anything but white space after the object; the
// caller then decodes raw with encoding/json, which decides and reports
// the errors. Keys are decoded; a value that is an object is returned as
// its raw bytes, checked to be an object of strings, and its own members
// are in nested under the same key (Call.SetArgs takes them).
func SplitObject(raw []byte) (members map[string]json.RawMessage, nested map[string]map[string]json.RawMessage, ok bool) {
	members, nested, end, ok := scanObject(raw, skipSpace(raw, 0), true)
	if !ok || skipSpace(raw, end) != len(raw) {
		return nil, nil, false
	}
	return members, nested, true
}

// scanObject reads the object at raw[i:] whose values are strings (or, when
// nested, objects of strings too) and returns its members and the offset
// just past it. A key given twice makes it fail.
func scanObject(raw []byte, i int, nest bool) (members map[string]json.RawMessage, nested map[string]map[string]json.RawMessage, _ int, _ bool) {
	if i >= len(raw) || raw[i] != '{' {
		return nil, nil, 0, false
	}
	members = map[string]json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return members, nil, i + 1, true
	}
	for {
		end, ok := stringEnd(raw, i)
		if !ok {
			return nil, nil, 0, false
		}
		key, ok := unquote(raw[i:end])
		if !ok {
			return nil, nil, 0, false
		}
		if _, dup := members[key]; dup {
			return nil, nil, 0, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, nil, 0, false
		}
		i = skipSpace(raw, i+1)
		if nest && i < len(raw) && raw[i] == '{' {
			var inner map[string]json.RawMessage
			inner, _, end, ok = scanObject(raw, i, false)
			if nested == nil {
				nested = map[string]map[string]json.RawMessage{}
			}
			nested[key] = inner
		} else {
			end, ok = stringEnd(raw, i)
		}
		if !ok {
			return nil, nil, 0, false
		}
		members[key] = json.RawMessage(raw[i:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, nil, 0, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return members, nested, i + 1, true
		default:
			return nil, nil, 0, false
		}
	}
}

// Unquote decodes the JSON string literal raw as encoding/json does (invalid
// UTF-8 and lone surrogates become U+FFFD); ok is false for anything that
// is not one JSON string.
func Unquote(raw []byte) (string, bool) { return unquote(raw) }
