package ipc

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startServer serves a fake controller on a socket in a short temp dir.
func startServer(t *testing.T, configure ...func(*Server)) (*fakeController, string, *Server) {
	t.Helper()
	dir, err := os.MkdirTemp("", "igipc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	l, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want 0600", fi.Mode().Perm())
	}
	f := newFake()
	s := NewServer(f, nil)
	for _, c := range configure {
		c(s)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
	return f, sock, s
}

func dialT(t *testing.T, sock string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// events reads task events until one named until arrives.
func events(t *testing.T, c *Client, until EventName) []Event {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out []Event
	for {
		m, err := c.Next()
		if err != nil {
			t.Fatalf("reading events: %v (got %d)", err, len(out))
		}
		if m.Type != TypeTaskEvent || m.Origin != OriginServer {
			t.Fatalf("message %s/%s, want TaskEvent from the server", m.Type, m.Origin)
		}
		var ev struct {
			Name    EventName         `json:"eventName"`
			Payload []json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		e := Event{Name: ev.Name}
		for _, p := range ev.Payload {
			var v any
			json.Unmarshal(p, &v)
			e.Payload = append(e.Payload, v)
		}
		out = append(out, e)
		if ev.Name == until {
			return out
		}
	}
}

func TestServerTaskLifecycle(t *testing.T) {
	f, sock, _ := startServer(t)
	c := dialT(t, sock)
	if a := c.Ack(); len(a.ClientID) != 12 || a.PID != os.Getpid() {
		t.Errorf("Ack = %+v, want a 12-hex clientId and pid %d", a, os.Getpid())
	}
	watcher := dialT(t, sock)
	conf := json.RawMessage(`{"apiProvider":"openrouter","openRouterModelId":"x/y","autoApprovalEnabled":true,"alwaysAllowWrite":true,"allowedMaxRequests":3,"unknownSetting":[1]}`)
	if err := c.Send(CommandStartNewTask, StartNewTask{Configuration: conf, Text: "build it"}); err != nil {
		t.Fatal(err)
	}
	evs := events(t, c, EventInteractive)
	if evs[0].Name != EventTaskCreated || evs[0].Task() != "task-1" {
		t.Fatalf("first event = %+v, want taskCreated task-1", evs[0])
	}
	if err := c.Send(CommandSendMessage, SendMessage{Text: "port 8080"}); err != nil {
		t.Fatal(err)
	}
	evs = events(t, c, EventTaskCompleted)
	last := evs[len(evs)-1]
	if last.Task() != "task-1" {
		t.Errorf("taskCompleted for %q", last.Task())
	}
	// The other client saw the same task through the broadcast.
	wevs := events(t, watcher, EventTaskCompleted)
	if len(wevs) == 0 || wevs[0].Name != EventTaskCreated {
		t.Errorf("watcher events = %v", wevs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.answers) != 1 || f.answers[0] != "port 8080" {
		t.Errorf("answers = %q, want [port 8080]", f.answers)
	}
	o := f.started[0].Options
	if o.Provider != "openai" || o.BaseURL != "https://openrouter.ai/api/v1" || o.Model != "x/y" ||
		o.MaxRequests != 3 || strings.Join(o.AutoApprove, ",") != "edit" {
		t.Errorf("options = %+v", o)
	}
}

const EventInteractive = EventTaskInteractive

func TestServerCancel(t *testing.T) {
	_, sock, _ := startServer(t)
	c := dialT(t, sock)
	c.Send(CommandStartNewTask, StartNewTask{Configuration: json.RawMessage(`{}`), Text: "x"})
	events(t, c, EventTaskInteractive)
	c.Send(CommandCancelTask, "task-1")
	events(t, c, EventTaskAborted)
}

// A hostile or broken client: its bad frames and messages are dropped and
// answered with nothing, and it cannot grow the server's memory without
// bound.
func TestServerHostileInput(t *testing.T) {
	f, sock, _ := startServer(t, func(s *Server) { s.MaxFrame = 1 << 10 })
	c := dialT(t, sock)
	w := func(b string) {
		if _, err := c.conn.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	w("not json\f")
	w(`{"type":5}` + "\f")
	w(`{"type":"message","data":{"type":"Ack","origin":"server","data":{"clientId":"x","pid":1,"ppid":1}}}` + "\f")
	w(`{"type":"message","data":{"type":"TaskCommand","origin":"client","clientId":"x","data":{"commandName":"StartNewTask","data":{"text":"no configuration"}}}}` + "\f")
	w(`{"type":"message","data":{"type":"TaskCommand","origin":"client","clientId":"x","data":{"commandName":"CancelTask","data":""}}}` + "\f")
	w(`{"type":"message","data":{"type":"TaskCommand","origin":"client","clientId":"x","data":{"commandName":"Format","data":"/"}}}` + "\f")
	// An unsupported provider is refused with an error message to this client.
	c.Send(CommandStartNewTask, StartNewTask{Configuration: json.RawMessage(`{"apiProvider":"bedrock"}`), Text: "x"})
	evs := events(t, c, EventMessage)
	if !strings.Contains(toJSON(evs[0].Payload), "bedrock") {
		t.Errorf("refusal = %s, want it to name the provider", toJSON(evs[0].Payload))
	}
	// The connection still works after all that.
	c.Send(CommandStartNewTask, StartNewTask{Configuration: json.RawMessage(`{}`), Text: "x"})
	events(t, c, EventTaskCreated)
	f.mu.Lock()
	n := len(f.started)
	f.mu.Unlock()
	if n != 1 {
		t.Errorf("started %d tasks, want 1", n)
	}
	// A frame over the limit ends the connection.
	big := dialT(t, sock)
	big.conn.Write([]byte(strings.Repeat("x", 4<<10)))
	big.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := big.Next(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the connection stayed open after an oversized frame")
			}
			break
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestListenRefusesLiveOrForeign(t *testing.T) {
	_, sock, _ := startServer(t)
	if _, err := Listen(sock); err == nil || !strings.Contains(err.Error(), "already listens") {
		t.Errorf("Listen on a live socket = %v, want already listens", err)
	}
	file := filepath.Join(filepath.Dir(sock), "plain")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := Listen(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen on a file = %v, want not a socket", err)
	}
}
