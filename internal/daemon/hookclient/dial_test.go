//go:build linux || darwin

package hookclient

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// dialUnix reaches a listening socket, reports the listener's credentials
// (this process here), and fails as net's dialer does where no one listens.
func TestDialUnix(t *testing.T) {
	dir, err := os.MkdirTemp("", "hc") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			done <- err
			return
		}
		_, err = c.Write([]byte("pong:" + string(b)))
		done <- err
	}()
	f, cr, err := dialUnix(context.Background(), sock, time.Second)
	if err != nil {
		t.Fatalf("dialUnix(%s): %v", sock, err)
	}
	defer f.Close()
	if cr.UID != os.Geteuid() || (cr.PID != 0 && cr.PID != os.Getpid()) {
		t.Errorf("credentials %+v, want uid %d, pid %d", cr, os.Geteuid(), os.Getpid())
	}
	if _, err := f.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "pong:ping" {
		t.Errorf("read %q, %v; want pong:ping", got, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A server that never answers: the deadline ends the read.
	go func() {
		c, err := ln.Accept()
		if err == nil {
			time.Sleep(2 * time.Second)
			c.Close()
		}
	}()
	g, _, err := dialUnix(context.Background(), sock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := g.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	ln.Close()

	if _, _, err := dialUnix(context.Background(), filepath.Join(dir, "none.sock"), time.Second); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("dial of a missing socket: %v, want ENOENT", err)
	}
	// A socket file no one listens on any more.
	stale := filepath.Join(dir, "stale.sock")
	l2, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l2.(*net.UnixListener).SetUnlinkOnClose(false)
	l2.Close()
	if _, _, err := dialUnix(context.Background(), stale, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial of a socket no one listens on: %v, want ECONNREFUSED", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := dialUnix(ctx, stale, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("dial with a cancelled context: %v", err)
	}
}
