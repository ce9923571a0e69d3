package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON decodes one JSON value into the types the schema validator
// takes (map[string]any, []any, string, json.Number, bool, nil), exactly as
// jsonschema.UnmarshalJSON (encoding/json with UseNumber) would, a few times
// faster: verify decodes every ledger line for the schema, and
// encoding/json's reflection-driven decoding of interface values was a fifth
// of its time. A fuzz test holds the two to the same results.
func decodeJSON(b []byte) (any, error) {
	d := jsonDecoder{b: b}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.b) {
		return nil, d.errorf("invalid character after top-level value")
	}
	return v, nil
}

type jsonDecoder struct {
	b []byte
	i int
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

var errJSONEnd = errors.New("unexpected end of JSON input")

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{d.i}, args...)...)
}

func (d *jsonDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if d.i >= len(d.b) {
		return nil, errJSONEnd
	}
	switch c := d.b[d.i]; {
	case c == '{':
		if depth >= maxJSONDepth {
			return nil, d.errorf("exceeded max depth")
		}
		return d.object(depth + 1)
	case c == '[':
		if depth >= maxJSONDepth {
			return nil, d.errorf("exceeded max depth")
		}
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.errorf("invalid character %q looking for beginning of value", d.b[d.i])
}

func (d *jsonDecoder) literal(lit string) error {
	if len(d.b)-d.i < len(lit) {
		if string(d.b[d.i:]) == lit[:len(d.b)-d.i] {
			return errJSONEnd
		}
		return d.errorf("invalid literal")
	}
	if string(d.b[d.i:d.i+len(lit)]) != lit {
		return d.errorf("invalid literal")
	}
	d.i += len(lit)
	return nil
}

func (d *jsonDecoder) object(depth int) (any, error) {
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		d.space()
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		if d.b[d.i] != '"' {
			return nil, d.errorf("invalid character %q looking for beginning of object key string", d.b[d.i])
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		if d.b[d.i] != ':' {
			return nil, d.errorf("invalid character %q after object key", d.b[d.i])
		}
		d.i++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, nil
		default:
			return nil, d.errorf("invalid character %q after object key:value pair", d.b[d.i])
		}
	}
}

func (d *jsonDecoder) array(depth int) (any, error) {
	d.i++ // [
	a := []any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, nil
	}
	for {
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return a, nil
		default:
			return nil, d.errorf("invalid character %q after array element", d.b[d.i])
		}
	}
}

func (d *jsonDecoder) number() (any, error) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.b[d.i] == '-' {
		d.i++
	}
	if d.i >= len(d.b) {
		return nil, errJSONEnd
	}
	switch {
	case d.b[d.i] == '0':
		d.i++
	case d.b[d.i] >= '1' && d.b[d.i] <= '9':
		digits()
	default:
		return nil, d.errorf("invalid character %q in numeric literal", d.b[d.i])
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		if digits() == 0 {
			return nil, d.errorf("invalid character %q after decimal point in numeric literal", d.b[d.i])
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.i >= len(d.b) {
			return nil, errJSONEnd
		}
		if digits() == 0 {
			return nil, d.errorf("invalid character %q in exponent of numeric literal", d.b[d.i])
		}
	}
	return json.Number(d.b[start:d.i]), nil
}

// str decodes a string the way encoding/json does, invalid UTF-8 and lone
// surrogates becoming U+FFFD.
func (d *jsonDecoder) str() (string, error) {
	d.i++ // "
	start := d.i
	// Fast path: no escapes, no control characters, valid ASCII.
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			s := string(d.b[start:d.i])
			d.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		d.i++
	}
	buf := make([]byte, 0, d.i-start+16)
	buf = append(buf, d.b[start:d.i]...)
	for {
		if d.i >= len(d.b) {
			return "", errJSONEnd
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("invalid character %q in string literal", c)
		case c == '\\':
			d.i++
			if d.i >= len(d.b) {
				return "", errJSONEnd
			}
			e := d.b[d.i]
			d.i++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := d.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A pair makes one rune; a lone half is U+FFFD.
					if d.i+6 <= len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						save := d.i
						d.i += 2
						r2, err := d.hex4()
						if err != nil {
							return "", err
						}
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							continue
						}
						d.i = save
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.errorf("invalid character %q in string escape code", e)
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			d.i += size
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, d.b[d.i-size:d.i]...)
			}
		}
	}
}

func (d *jsonDecoder) hex4() (rune, error) {
	if d.i+4 > len(d.b) {
		for j := d.i; j < len(d.b); j++ {
			if _, err := strconv.ParseUint(string(d.b[j]), 16, 8); err != nil {
				return 0, d.errorf("invalid character in \\u hexadecimal character escape")
			}
		}
		return 0, errJSONEnd
	}
	n, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 32)
	if err != nil {
		return 0, d.errorf("invalid character in \\u hexadecimal character escape")
	}
	d.i += 4
	return rune(n), nil
}
