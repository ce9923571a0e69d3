package engine

import (
	"encoding/json"
	"testing"
)

// FuzzUnquote checks the fast string decoder against encoding/json: for
// every input both accept, the strings are equal; whatever encoding/json
// refuses, unquote refuses too (the call then reports encoding/json's error).
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"line\nnext\ttab \"q\" \\ \/"`, `"\u00e9\u4e2d"`,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", "\"\xe2\x82\"", `"\x"`,
		`"a`, `"\u12"`, "\"\x01\"", `"\"`, `"é"`, `"\uD800\uDC00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		wantErr := json.Unmarshal(raw, &want)
		got, ok := unquote(raw)
		if ref, refOK := unquoteRef(raw); got != ref || ok != refOK {
			t.Fatalf("unquote(%q) = %q, %v; reference %q, %v", raw, got, ok, ref, refOK)
		}
		if wantErr != nil {
			if ok {
				t.Fatalf("unquote(%q) = %q, but encoding/json refuses it: %v", raw, got, wantErr)
			}
			return
		}
		if !ok {
			// Allowed only for what is not a bare string literal
			// (surrounding spaces, which a decoded argument never has;
			// numbers...): the caller falls back to encoding/json.
			if len(raw) > 0 && raw[0] == '"' && raw[len(raw)-1] == '"' {
				t.Fatalf("unquote(%q) refused a string encoding/json decodes to %q", raw, want)
			}
			return
		}
		if got != want {
			t.Fatalf("unquote(%q) = %q, encoding/json says %q", raw, got, want)
		}
	})
}
