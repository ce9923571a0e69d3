package provider

import (
	"strings"
	"testing"
)

func TestDataURL(t *testing.T) {
	for _, tc := range []struct {
		in, mt, data string
		ok           bool
	}{
		{"data:image/png;base64,AAAA", "image/png", "AAAA", true},
		{"data:image/png,AAAA", "", "", false},
		{"data:;base64,AAAA", "", "", false},
		{"data:image/png;base64,", "", "", false},
		{"http://example.com/a.png", "", "", false},
		{"data:image/png;x=1;base64,AAAA", "", "", false},
	} {
		mt, data, ok := DataURL(tc.in)
		if mt != tc.mt || data != tc.data || ok != tc.ok {
			t.Errorf("DataURL(%q) = %q %q %v", tc.in, mt, data, ok)
		}
	}
}

func FuzzDataURL(f *testing.F) {
	f.Add("data:image/png;base64,AAAA")
	f.Add("data:,")
	f.Fuzz(func(t *testing.T, s string) {
		mt, data, ok := DataURL(s)
		if ok && (s != "data:"+mt+";base64,"+data || mt == "" || data == "" || strings.ContainsAny(mt, ",;")) {
			t.Fatalf("DataURL(%q) = %q %q", s, mt, data)
		}
	})
}
