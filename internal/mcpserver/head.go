package mcpserver

import "bytes"

// The gate reads the "id" and "method" of every line in both directions.
// Decoding a whole message for that cost more than the rest of the gate: a
// write_to_file call carries the file's content, a read_file answer the
// file's, and encoding/json scans every byte of them. scanHead finds the
// two members of a plain object and skips every other value by its
// brackets and string quotes, without decoding it. Anything less plain (a
// batch, an escape in a member name, a method that is not a simple string)
// goes to encoding/json, whose answer is the reference: FuzzScanHead checks
// that both agree on every valid message. On invalid JSON the SDK ends the
// connection, which ends the gate's waits (Close), so what scanHead makes
// of a broken line does not matter.

// scanHead reads the head of one JSON object. ok is false when the line is
// not one scanHead reads alone; then rpcHeads decodes it with encoding/json.
func scanHead(b []byte) (h rpcHead, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return h, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return h, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return h, false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return h, false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return h, false // an escaped name may spell "id": let encoding/json say
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return h, false
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 {
			return h, false
		}
		val := b[i:vend]
		// encoding/json matches member names to fields without regard to
		// case, and the last of duplicate members wins.
		switch {
		case bytes.EqualFold(key, []byte("id")):
			h.ID = val
		case bytes.EqualFold(key, []byte("method")):
			if string(val) == "null" {
				break // null leaves a string as it was
			}
			if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !plainText(val[1:len(val)-1]) {
				return h, false
			}
			h.Method = string(val[1 : len(val)-1])
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return h, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return h, skipSpace(b, i+1) == len(b)
		default:
			return h, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] (a
// quote), or -1 when it does not end.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1 when there is none. Containers are skipped by their brackets, strings
// by their quotes; nothing is decoded.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e := stringEnd(b, i)
				if e < 0 {
					return -1
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // a number, true, false or null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// plainText reports whether s holds no byte that a JSON string must
// escape and no byte outside ASCII (encoding/json replaces invalid UTF-8).
func plainText(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}
