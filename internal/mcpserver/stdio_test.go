package mcpserver

import (
	"bufio"
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
	g := newEOFGate(strings.NewReader(in), io.Discard)
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
