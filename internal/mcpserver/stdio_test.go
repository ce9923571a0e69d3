package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// A tool call is handed on only once the calls before it are answered,
// while other messages pass; the end of the input waits for the answers.
func TestEOFGateOrdersToolCalls(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"select_active_intent"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`,
		`{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"write_to_file"}}`,
	}, "\n") + "\n"
	g := newEOFGate(strings.NewReader(in), io.Discard, 0)
	r := bufio.NewReader(g)

	var mu sync.Mutex
	var events []string
	note := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	first, err := r.ReadString('\n')
	if err != nil || !strings.Contains(first, `"id":1`) {
		t.Fatalf("first line %q, %v", first, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The notification passes; the second call waits for the first
		// call's answer.
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				note("eof")
				return
			}
			switch {
			case strings.Contains(line, "notifications/progress"):
				note("notification")
			case strings.Contains(line, `"id":"2"`):
				note("call 2")
			}
		}
	}()
	// The goroutine cannot see call 2 before call 1 is answered; once the
	// notification is through, answer call 1.
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n > 0 {
			break
		}
		// Let the reader run; this is no timing assumption, the loop ends
		// when the notification has been read.
		runtime.Gosched()
	}
	note("answer 1")
	g.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	// Answer call 2 after it is read, so the end of input can come.
	for {
		mu.Lock()
		seen := len(events) >= 3
		mu.Unlock()
		if seen {
			break
		}
		runtime.Gosched()
	}
	g.Write([]byte(`{"jsonrpc":"2.0","id":"2","result":{}}` + "\n"))
	<-done
	want := []string{"notification", "answer 1", "call 2", "eof"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %v", events, want)
	}
}

// endless is a client that sends x's for ever and never a newline, after
// what head holds; n counts the bytes taken from it.
type endless struct {
	head string
	n    int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n < len(e.head) {
		k := copy(p, e.head[e.n:])
		e.n += k
		return k, nil
	}
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

// A line longer than the limit ends the connection: the gate stops reading
// (it takes at most the limit and one read more from the client), the
// lines before it are handed on and answered first, and the client then
// gets a JSON-RPC error naming the limit.
func TestEOFGateBoundsALine(t *testing.T) {
	const max = 100 << 10
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n"
	in := &endless{head: first + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"content":"`}
	var out strings.Builder
	g := newEOFGate(in, &out, max)
	r := bufio.NewReader(g)
	line, err := r.ReadString('\n')
	if err != nil || line != first {
		t.Fatalf("first line %q, %v; want %q", line, err, first)
	}
	got := make(chan error, 1)
	go func() {
		_, err := r.ReadString('\n')
		got <- err
	}()
	// The error waits for the answer to request 1.
	g.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	err = <-got
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Max != max {
		t.Fatalf("read past the limit: %v, want a MessageTooLargeError of %d", err, max)
	}
	if in.n > max+len(first)+64<<10+1024 {
		t.Errorf("the gate took %d bytes from the client, more than the limit %d and one read", in.n, max)
	}
	// Read again: the same error, and nothing more taken.
	n := in.n
	if _, err := g.Read(make([]byte, 10)); !errors.As(err, &tl) || in.n != n {
		t.Errorf("second read: %v, %d more bytes taken", err, in.n-n)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("client got %q, want the answer to 1 and then an error", out.String())
	}
	var resp struct {
		ID    *int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Max int `json:"max_message_bytes"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &resp); err != nil {
		t.Fatalf("last line to the client %q: %v", lines[len(lines)-1], err)
	}
	if resp.ID != nil || resp.Error.Code != -32600 || resp.Error.Data.Max != max ||
		!strings.Contains(resp.Error.Message, "102400 bytes") || !strings.Contains(resp.Error.Message, "--max-message-size") {
		t.Errorf("error to the client %q", lines[len(lines)-1])
	}
}

// A complete line longer than the limit is refused too, and the lines of
// the same read before it still pass; a line of exactly the limit passes.
func TestEOFGateLimitIsInclusive(t *testing.T) {
	const max = 64
	ok := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", max-42) + `"}`
	if len(ok) != max {
		t.Fatalf("test line is %d bytes, want %d", len(ok), max)
	}
	long := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", max-41) + `"}`
	g := newEOFGate(strings.NewReader(ok+"\n"+long+"\n"+ok+"\n"), io.Discard, max)
	r := bufio.NewReader(g)
	if line, err := r.ReadString('\n'); err != nil || line != ok+"\n" {
		t.Fatalf("line of the limit: %q, %v", line, err)
	}
	var tl *MessageTooLargeError
	if line, err := r.ReadString('\n'); !errors.As(err, &tl) {
		t.Fatalf("line of the limit plus one: %q, %v; want MessageTooLargeError", line, err)
	}
}

// onWarmStack runs f while a connection is served on the goroutine kept
// for it, else on the caller's; either way f's panic reaches the caller.
func TestOnWarmStack(t *testing.T) {
	m := newToolServer(nil, Options{})
	for _, serving := range []bool{false, true} {
		if serving {
			m.startWarm()
		}
		ran := false
		m.onWarmStack(func() { ran = true })
		if !ran {
			t.Errorf("serving=%v: f did not run", serving)
		}
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Errorf("serving=%v: recovered %v, want the panic of f", serving, p)
				}
			}()
			m.onWarmStack(func() { panic("boom") })
		}()
	}
	m.stopWarm()
	ran := false
	m.onWarmStack(func() { ran = true })
	if !ran {
		t.Error("after the last connection: f did not run")
	}
}

// chunked hands out data in reads of the given sizes, in turn.
type chunked struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%97 + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzEOFGateLines: however the input is cut into reads, the gate hands on
// exactly its lines, each with its newline (the last may lack one), and
// stops with MessageTooLargeError at the first line longer than the limit.
func FuzzEOFGateLines(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), []byte{0, 5, 1}, uint8(3))
	f.Add([]byte("abcdef\nx\n"), []byte{2}, uint8(4))
	f.Add([]byte("x\nyyyy"), []byte{}, uint8(3))
	f.Fuzz(func(t *testing.T, data, sizes []byte, max8 uint8) {
		// No JSON objects or arrays: the gate then waits for no answers.
		data = bytes.Map(func(r rune) rune {
			if r == '{' || r == '[' {
				return '('
			}
			return r
		}, data)
		max := int(max8)%32 + 1
		var want []string
		tooLarge := false
		for rest := string(data); rest != ""; {
			line := rest
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i+1], rest[i+1:]
			} else {
				rest = ""
			}
			if len(strings.TrimSuffix(line, "\n")) > max {
				tooLarge = true
				break
			}
			want = append(want, line)
		}
		g := newEOFGate(&chunked{data: data, sizes: sizes}, io.Discard, max)
		var got []string
		var err error
		for {
			var line string
			line, err = readLineOf(g)
			if line != "" {
				got = append(got, line)
			}
			if err != nil {
				break
			}
		}
		var tl *MessageTooLargeError
		if tooLarge != errors.As(err, &tl) || !tooLarge && err != io.EOF {
			t.Fatalf("input %q, limit %d: error %v, want too large: %v", data, max, err, tooLarge)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("input %q, limit %d: lines %q, want %q", data, max, got, want)
		}
	})
}

// readLineOf reads one line from g with small reads, as the SDK's decoder
// may.
func readLineOf(g *eofGate) (string, error) {
	var b []byte
	p := make([]byte, 3)
	for {
		n, err := g.Read(p)
		b = append(b, p[:n]...)
		if err != nil || n > 0 && b[len(b)-1] == '\n' {
			return string(b), err
		}
	}
}
