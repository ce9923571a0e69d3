package hooks_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sessionWrites counts the session files renamed into place in dir (every
// session write is an atomic replace) while fn runs, as the kernel saw them.
func sessionWrites(t *testing.T, dir string, fn func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	fn()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			return n
		}
		if err != nil {
			t.Fatalf("inotify read: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			if ev.Mask&unix.IN_MOVED_TO != 0 && strings.HasPrefix(name, "s-") && strings.HasSuffix(name, ".json") {
				n++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// select_active_intent writes the session once per call: the choice and the
// usage counters go in the same update, at the end of the call.
func TestSelectWritesTheSessionOnce(t *testing.T) {
	e := newEnv(t, map[string]string{"src/a.go": "package a\n"})
	// A first call creates the sessions directory and the session (when
	// the runtime writes its batch).
	e.must("read_file", map[string]any{"path": "src/a.go"})
	if err := e.rt.FlushDerived(); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(e.orch, "sessions")
	for _, id := range []string{"INT-001", "INT-001"} {
		if n := sessionWrites(t, sessions, func() {
			e.must("select_active_intent", map[string]any{"intent_id": id})
		}); n != 1 {
			t.Fatalf("select_active_intent wrote the session %d times, want 1", n)
		}
	}
	// The one write holds the choice: a write in scope is allowed.
	e.must("read_file", map[string]any{"path": "src/a.go"})
	if err := e.rt.FlushDerived(); err != nil {
		t.Fatal(err)
	}
	// What a write derives (its hash, its counter) waits for the batch:
	// one session write for the call and its batch.
	if n := sessionWrites(t, sessions, func() {
		e.must("write_to_file", map[string]any{"path": "src/a.go", "content": "package a // 2\n"})
		if err := e.rt.FlushDerived(); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Fatalf("write_to_file and its batch wrote the session %d times, want 1", n)
	}
}
