package audit

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeJSON must give what jsonschema.UnmarshalJSON gives, and fail where it
// fails.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x"],"b":{}}`, `"\u00e9\ud83d\ude00\ud800x\\\/\b\f\n\r\t"`,
		`[]`, `0`, `-0.0e-0`, `01`, `1.`, `.5`, `"\x"`, `"` + "\x01" + `"`, "\"\xff\xfe\"", `{"a":1,"a":2}`,
		` {"k" : [ 1 , 2 ] } `, `tru`, `nul`, `[1,]`, `{"a":1,}`, `{"a"}`, `"\u12"`, `"\ud800\u00"`, `1 2`,
		`{"version":"0.1.0","id":"01a1fb2f-a959-769c-ba42-c537ee618c37","timestamp":"2026-11-20T22:59:27Z","files":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		got, gerr := decodeJSON(b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("decodeJSON(%q): error %v, encoding/json: %v", b, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeJSON(%q) = %#v, want %#v", b, got, want)
		}
	})
}
