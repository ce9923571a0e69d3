package hookclient

import (
	"bufio"
	"strings"
	"testing"
)

// The answers of Go's HTTP server to an HTTP/1.0 request, as the socket
// gives them, and broken ones, which must never be taken for an answer.
func TestReadResponse(t *testing.T) {
	cases := []struct {
		in     string
		status int
		body   string
		err    bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"reply\":1}", 200, `{"reply":1}`, false},
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"reply\":{}}\n", 200, "{\"reply\":{}}\n", false},
		{"HTTP/1.0 421 Misdirected Request\r\nContent-Length: 3\r\n\r\nno\n", 421, "no\n", false},
		{"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, "ok", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nshort", 200, "short", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", 0, "", true}, // cut short
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 0, "", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, "", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok", 0, "", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", 0, "", true},
		{"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", 0, "", true},
		{"SSH-2.0-OpenSSH\r\n", 0, "", true},
		{"HTTP/1.1 2000 OK\r\n\r\n", 0, "", true},
		{"", 0, "", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", 0, "", true}, // headers never end
	}
	for _, c := range cases {
		status, _, body, err := readResponse(bufio.NewReader(strings.NewReader(c.in)))
		if (err != nil) != c.err || status != c.status || string(body) != c.body {
			t.Errorf("readResponse(%q) = %d, %q, %v; want %d, %q, error %v", c.in, status, body, err, c.status, c.body, c.err)
		}
	}
}

// A hostile listener on the socket can send anything: readResponse returns
// an answer or an error, never panics, and never returns more than the
// answer's bound.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.0 500 x\r\nA: b\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		status, _, body, err := readResponse(bufio.NewReader(strings.NewReader(string(b))))
		if err != nil {
			return
		}
		if status < 100 || status > 999 {
			t.Fatalf("status %d accepted", status)
		}
		if len(body) > maxAnswerBytes || len(body) > len(b) {
			t.Fatalf("body of %d bytes from %d bytes of input", len(body), len(b))
		}
	})
}
