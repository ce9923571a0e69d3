package orchestration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSessionsLoadMissing(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	sess, err := s.Load("abc")
	if err != nil {
		t.Fatal(err)
	}
	if sess.ID != "abc" || sess.Intent != "" || sess.Reads == nil || sess.Snapshots == nil || !sess.Created.IsZero() {
		t.Errorf("Load(missing) = %+v, want a fresh session with empty maps", sess)
	}
}

func TestSessionsUpdate(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	first, err := s.Update("sess-1", func(sess *Session) error {
		sess.Intent = "INT-001"
		sess.Mode = "code"
		sess.Reads["src/a.go"] = strings.Repeat("ab", 32)
		sess.Snapshots["call-1"] = json.RawMessage(`{"files":3}`)
		sess.Todos = json.RawMessage(`[{"content":"x","status":"pending"}]`)
		sess.ID = "hijack" // ignored: a session keeps its id
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "sess-1" || first.Created.IsZero() || !first.Updated.Equal(first.Created) {
		t.Errorf("Update result = %+v", first)
	}
	time.Sleep(2 * time.Millisecond)
	second, err := s.Update("sess-1", func(sess *Session) error {
		delete(sess.Snapshots, "call-1")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Created.Equal(first.Created) || !second.Updated.After(first.Updated) {
		t.Errorf("Created/Updated = %v/%v after %v/%v", second.Created, second.Updated, first.Created, first.Updated)
	}
	got, err := s.Load("sess-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Intent != "INT-001" || got.Mode != "code" || got.Reads["src/a.go"] != strings.Repeat("ab", 32) ||
		len(got.Snapshots) != 0 || string(got.Todos) != `[{"content":"x","status":"pending"}]` ||
		!got.Created.Equal(first.Created) {
		t.Errorf("Load after Update = %+v", got)
	}
	if _, err := s.Load("hijack"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(s.dir, ".gitignore")); err != nil || string(data) != "*\n" {
		t.Errorf("sessions .gitignore = %q, %v", data, err)
	}
}

func TestSessionsUpdateError(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	boom := errors.New("boom")
	if _, err := s.Update("new", func(sess *Session) error {
		sess.Intent = "INT-1"
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("Update = %v, want boom", err)
	}
	if _, err := os.Stat(s.path("new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Update of a new session wrote a file: %v", err)
	}

	if _, err := s.Update("old", func(sess *Session) error { sess.Intent = "INT-1"; return nil }); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.path("old"))
	if _, err := s.Update("old", func(sess *Session) error { sess.Intent = "INT-2"; return boom }); !errors.Is(err, boom) {
		t.Errorf("Update = %v, want boom", err)
	}
	if after, _ := os.ReadFile(s.path("old")); string(after) != string(before) {
		t.Errorf("a failed Update changed the session:\n%s\nwas\n%s", after, before)
	}
}

func TestSessionsHostileIDs(t *testing.T) {
	ids := []string{
		"../../x", "..", ".", "a/b", "/etc/passwd", `a\b`, `C:\x`, "a\x00b", ".hidden",
		strings.Repeat("x", 10000), strings.Repeat("../", 1000), "CON", "nul", "ünïcödé", "ABC", "abc",
		"a b\tc\n", "*?<>|\"",
	}
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	s := OpenSessions(dir)
	for i, id := range ids {
		name := fmt.Sprintf("%d-%.20q", i, id)
		t.Run(name, func(t *testing.T) {
			if _, err := s.Update(id, func(sess *Session) error { sess.Mode = strconv.Itoa(i); return nil }); err != nil {
				t.Fatalf("Update: %v", err)
			}
			sess, err := s.Load(id)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if sess.ID != id || sess.Mode != strconv.Itoa(i) {
				t.Errorf("Load(%q) = id %q mode %q, want mode %d", id, sess.ID, sess.Mode, i)
			}
		})
	}
	// Nothing escaped the directory, and every name in it is a safe one.
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 1 || entries[0].Name() != "sessions" {
		t.Errorf("files next to the sessions directory: %v, %v", entries, err)
	}
	safe := regexp.MustCompile(`^[A-Za-z0-9_-]{0,40}-[0-9a-f]{32}\.(json|lock)$`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".gitignore" && !safe.MatchString(e.Name()) {
			t.Errorf("unsafe session file name %q", e.Name())
		}
	}
	if want := 2*len(ids) + 1; len(entries) != want {
		t.Errorf("%d files in the sessions directory, want %d (distinct ids must get distinct files)", len(entries), want)
	}
	list, err := s.List()
	if err != nil || len(list) != len(ids) {
		t.Errorf("List() = %d sessions, %v; want %d", len(list), err, len(ids))
	}

	for _, bad := range []string{"", "\xff\xfe"} {
		if _, err := s.Load(bad); err == nil {
			t.Errorf("Load(%q): want error", bad)
		}
		if _, err := s.Update(bad, func(*Session) error { return nil }); err == nil {
			t.Errorf("Update(%q): want error", bad)
		}
	}
}

func TestSessionsCorrupt(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"garbage", "not json"},
		{"truncated", `{"id":"s","reads":{"a":`},
		{"trailing data", `{"id":"s"} {"id":"s"}`},
		{"wrong type", `{"id":"s","reads":[1,2]}`},
		{"no id", `{"intent":"INT-1"}`},
		{"another session's file", `{"id":"t"}`},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := OpenSessions(t.TempDir())
			p := s.path("s")
			if err := os.WriteFile(p, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load("s"); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("Load = %v, want an error naming %s", err, p)
			}
			if _, err := s.Update("s", func(*Session) error { return nil }); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("Update = %v, want an error naming %s", err, p)
			}
			if data, _ := os.ReadFile(p); string(data) != tt.data {
				t.Errorf("corrupt session file was rewritten: %q", data)
			}
			if _, err := s.List(); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("List = %v, want an error naming %s", err, p)
			}
		})
	}
}

func TestSessionsList(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Errorf("List() on a missing directory = %v, %v", list, err)
	}
	for _, id := range []string{"b", "a", "c"} {
		if _, err := s.Update(id, func(*Session) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover temporary file from a crashed write is not a session.
	if err := os.WriteFile(filepath.Join(s.dir, ".x.json.tmp-1"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sess := range list {
		ids = append(ids, sess.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Errorf("List() ids = %v, want a,b,c", ids)
	}
}

// sessionsIncrement adds one to a counter kept in Todos.
func sessionsIncrement(sess *Session) error {
	var n int
	if len(sess.Todos) > 0 {
		if err := json.Unmarshal(sess.Todos, &n); err != nil {
			return err
		}
	}
	sess.Todos = json.RawMessage(strconv.Itoa(n + 1))
	return nil
}

func sessionsCounter(t *testing.T, s *SessionStore, id string) int {
	t.Helper()
	sess, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(sess.Todos))
	if err != nil {
		t.Fatalf("counter %q: %v", sess.Todos, err)
	}
	return n
}

func TestSessionsConcurrentGoroutines(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	const workers, each = 16, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.Update("shared", sessionsIncrement); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := sessionsCounter(t, s, "shared"); got != workers*each {
		t.Errorf("counter = %d, want %d", got, workers*each)
	}
}

const (
	sessionsHelperDir = "INTENTGATE_TEST_SESSIONS_DIR"
	sessionsHelperN   = "INTENTGATE_TEST_SESSIONS_N"
)

// TestSessionsHelperProcess is not a test: TestSessionsConcurrentProcesses
// runs the test binary again with it selected, as a competing process.
func TestSessionsHelperProcess(t *testing.T) {
	dir := os.Getenv(sessionsHelperDir)
	if dir == "" {
		return
	}
	n, err := strconv.Atoi(os.Getenv(sessionsHelperN))
	if err != nil {
		t.Fatal(err)
	}
	s := OpenSessions(dir)
	for range n {
		if _, err := s.Update("shared", sessionsIncrement); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSessionsConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := OpenSessions(filepath.Join(t.TempDir(), "sessions"))
	const procs, each, local = 4, 40, 40
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSessionsHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), sessionsHelperDir+"="+s.dir, sessionsHelperN+"="+strconv.Itoa(each))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	// This process competes too.
	for range local {
		if _, err := s.Update("shared", sessionsIncrement); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if got, want := sessionsCounter(t, s, "shared"), procs*each+local; got != want {
		t.Errorf("counter = %d, want %d", got, want)
	}
}

// A session file changed outside the store (its MAC no longer matches) is
// refused, never believed; so is one copied from another session's file.
// A session marked Refused stays refused until its file is removed.
func TestSessionsAuthenticated(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), ".orchestration", "sessions"))
	for _, id := range []string{"victim", "attacker"} {
		if _, err := s.Update(id, func(sess *Session) error { sess.Intent = "INT-" + id; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	p := s.path("victim")
	orig, _ := os.ReadFile(p)
	for name, forged := range map[string][]byte{
		"intent edited, MAC kept": bytes.Replace(orig, []byte("INT-victim"), []byte("INT-wide00"), 1),
		"MAC line removed":        orig[:bytes.Index(orig, []byte("hmac-sha256:"))],
		"another session's file":  func() []byte { b, _ := os.ReadFile(s.path("attacker")); return b }(),
	} {
		os.WriteFile(p, forged, 0o644)
		if _, err := s.Load("victim"); !errors.Is(err, ErrSessionRefused) && name != "another session's file" {
			t.Errorf("%s: Load = %v, want ErrSessionRefused", name, err)
		} else if err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
		if _, err := s.Update("victim", func(*Session) error { return nil }); err == nil {
			t.Errorf("%s: Update succeeded", name)
		}
	}
	os.WriteFile(p, orig, 0o644)
	if sess, err := s.Load("victim"); err != nil || sess.Intent != "INT-victim" {
		t.Fatalf("the original file: %v %v", sess, err)
	}
	if err := s.Refuse("victim", "its picture was altered"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("victim"); !errors.Is(err, ErrSessionRefused) || !strings.Contains(err.Error(), "its picture was altered") {
		t.Fatalf("Load of a refused session = %v", err)
	}
	os.Remove(p)
	if sess, err := s.Load("victim"); err != nil || sess.Intent != "" {
		t.Fatalf("after removing the file: %v %v, want a fresh session", sess, err)
	}
}

// A store remembers the session it last read or wrote, and hands out
// copies: changing a loaded session, or an update whose fn fails half way,
// never changes what the next Load returns.
func TestSessionsRememberedCopies(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), ".orchestration", "sessions"))
	if _, err := s.Update("s", func(sess *Session) error {
		sess.Reads["a.go"] = "aa"
		sess.CountUse("write_to_file", false)
		sess.Tasks = append(sess.Tasks, Task{ID: "t1"})
		sess.Question = &Question{Text: "q"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	got.Reads["a.go"] = "bb"
	got.Reads["b.go"] = "cc"
	got.Usage["write_to_file"] = ToolUsage{Attempts: 9}
	got.Tasks[0].ID = "t9"
	got.Question.Text = "changed"
	if _, err := s.Update("s", func(sess *Session) error {
		sess.Reads["a.go"] = "dd"
		return errors.New("no")
	}); err == nil {
		t.Fatal("Update with a failing fn succeeded")
	}
	again, err := s.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	if again.Reads["a.go"] != "aa" || len(again.Reads) != 1 || again.Usage["write_to_file"].Attempts != 1 ||
		again.Tasks[0].ID != "t1" || again.Question.Text != "q" {
		t.Fatalf("Load after changing copies = %+v", again)
	}
	// A fresh store decodes the file: the same session.
	fresh, err := OpenSessions(s.dir).Load("s")
	if err != nil || fresh.Reads["a.go"] != "aa" || fresh.Tasks[0].ID != "t1" {
		t.Fatalf("fresh store: %+v %v", fresh, err)
	}
}

// With batching on, a derived update is seen at once by the store that made
// it, and by other stores (other processes) only once written: at Flush or
// Close. Changes another process writes meanwhile are kept, with the
// batched ones applied on top; a file tampered with meanwhile is refused.
func TestSessionsBatchedDerivedUpdates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".orchestration", "sessions")
	mine, other := OpenSessions(dir), OpenSessions(dir)
	mine.Batch(time.Hour) // written only when flushed
	if _, err := mine.Update("s", func(s *Session) error { s.Intent = "INT-001"; return nil }); err != nil {
		t.Fatal(err)
	}
	read := func(path string) func(*Session) error {
		return func(s *Session) error { s.Reads[path] = "h-" + path; s.CountUse("read_file", false); return nil }
	}
	if _, err := mine.UpdateDerived("s", read("a")); err != nil {
		t.Fatal(err)
	}
	if s, err := mine.Load("s"); err != nil || s.Reads["a"] != "h-a" || s.Intent != "INT-001" {
		t.Fatalf("own Load after a batched update = %+v, %v; want the read of a", s, err)
	}
	if s, err := other.Load("s"); err != nil || s.Reads["a"] != "" {
		t.Fatalf("another process sees the unwritten batch: %+v, %v", s, err)
	}

	// Another process changes the session durably while the batch waits.
	if _, err := other.Update("s", func(s *Session) error { s.Intent = "INT-002"; s.Reads["b"] = "h-b"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.UpdateDerived("s", read("c")); err != nil {
		t.Fatal(err)
	}
	s, err := mine.Load("s")
	if err != nil || s.Intent != "INT-002" || s.Reads["a"] != "h-a" || s.Reads["b"] != "h-b" || s.Reads["c"] != "h-c" {
		t.Fatalf("own Load after another process's update = %+v, %v; want INT-002 and reads a, b, c", s, err)
	}
	if err := mine.Flush(); err != nil {
		t.Fatal(err)
	}
	s, err = other.Load("s")
	if err != nil || s.Intent != "INT-002" || len(s.Reads) != 3 || s.Usage["read_file"].Attempts != 2 {
		t.Fatalf("after Flush another process loads %+v, %v; want INT-002, 3 reads, 2 counted calls", s, err)
	}

	// A durable update writes the batch with it.
	if _, err := mine.UpdateDerived("s", read("d")); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Update("s", func(s *Session) error { s.Mode = "code"; return nil }); err != nil {
		t.Fatal(err)
	}
	if s, err := other.Load("s"); err != nil || s.Mode != "code" || s.Reads["d"] != "h-d" {
		t.Fatalf("after a durable update another process loads %+v, %v; want the batched read of d with it", s, err)
	}

	// The file tampered with while a batch waits: refused, not believed
	// nor overwritten.
	if _, err := mine.UpdateDerived("s", read("e")); err != nil {
		t.Fatal(err)
	}
	p := mine.path("s")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(b, []byte(`"INT-002"`), []byte(`"INT-009"`), 1)
	if err := os.WriteFile(p, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Load("s"); !errors.Is(err, ErrSessionRefused) {
		t.Fatalf("Load of a tampered file with a batch waiting = %v, want ErrSessionRefused", err)
	}
	if err := mine.Close(); !errors.Is(err, ErrSessionRefused) {
		t.Fatalf("Close with a tampered file = %v, want ErrSessionRefused", err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, forged) {
		t.Fatal("the batch was written over a tampered file")
	}

	// After Close, derived updates are written at once.
	os.Remove(p)
	if _, err := mine.UpdateDerived("s", read("f")); err != nil {
		t.Fatal(err)
	}
	if s, err := other.Load("s"); err != nil || s.Reads["f"] != "h-f" {
		t.Fatalf("after Close a derived update waits: %+v, %v", s, err)
	}
}

// A store keeps a session file's bytes while a stat proves them current.
// A forgery written in place between two loads, the same size, its mtime
// set back, must still be read and refused.
func TestSessionsKeptFileSeesTampering(t *testing.T) {
	s := OpenSessions(filepath.Join(t.TempDir(), ".orchestration", "sessions"))
	if _, err := s.Update("victim", func(sess *Session) error { sess.Intent = "INT-narrow"; return nil }); err != nil {
		t.Fatal(err)
	}
	p := s.path("victim")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Settled: past the file system's clock ticks and any whole-second
	// timestamps, the store keeps what it reads next.
	time.Sleep(2100 * time.Millisecond)
	for range 2 {
		if sess, err := s.Load("victim"); err != nil || sess.Intent != "INT-narrow" {
			t.Fatalf("Load = %v, %v", sess, err)
		}
	}
	forged := bytes.Replace(orig, []byte("INT-narrow"), []byte("INT-wide00"), 1)
	if err := os.WriteFile(p, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if sess, err := s.Load("victim"); !errors.Is(err, ErrSessionRefused) {
		t.Fatalf("Load after a same-size forgery with the mtime set back = %+v, %v; want ErrSessionRefused", sess, err)
	}
}

// LoadShared hands out the store's own copy of a session: a later update
// (batched or durable, by this store or another process's) makes a new one
// and leaves the copy handed out as it was, Load still gives a copy of the
// caller's own, and a session another process wrote meanwhile is shown
// with the batched changes on top, as Load shows it.
func TestSessionsLoadSharedIsNeverChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".orchestration", "sessions")
	mine, other := OpenSessions(dir), OpenSessions(dir)
	mine.Batch(time.Hour)
	if _, err := mine.Update("s", func(s *Session) error { s.Intent = "INT-001"; s.Reads["a"] = "h-a"; return nil }); err != nil {
		t.Fatal(err)
	}
	first, err := mine.LoadShared("s")
	if err != nil || first.Intent != "INT-001" || first.Reads["a"] != "h-a" {
		t.Fatalf("LoadShared = %+v, %v", first, err)
	}
	read := func(path string) func(*Session) error {
		return func(s *Session) error { s.Reads[path] = "h-" + path; s.CountUse("read_file", false); return nil }
	}
	got, err := mine.UpdateDerived("s", read("b"))
	if err != nil || got.Reads["b"] != "h-b" {
		t.Fatalf("UpdateDerived = %+v, %v", got, err)
	}
	if len(first.Reads) != 1 || first.Usage != nil {
		t.Fatalf("the copy handed out before the update changed: %+v", first)
	}
	second, err := mine.LoadShared("s")
	if err != nil || second.Reads["b"] != "h-b" || second.Reads["a"] != "h-a" {
		t.Fatalf("LoadShared after a batched update = %+v, %v; want reads a and b", second, err)
	}
	// Load gives a copy its caller may change: the store's stays as it is.
	own, err := mine.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	own.Reads["x"] = "changed by the caller"
	own.Intent = "INT-X"
	if s, err := mine.LoadShared("s"); err != nil || s.Reads["x"] != "" || s.Intent != "INT-001" {
		t.Fatalf("a change of Load's copy reached the store: %+v, %v", s, err)
	}

	// Another process writes the session: the batched change goes on top.
	if _, err := other.Update("s", func(s *Session) error { s.Intent = "INT-002"; s.Reads["c"] = "h-c"; return nil }); err != nil {
		t.Fatal(err)
	}
	third, err := mine.LoadShared("s")
	if err != nil || third.Intent != "INT-002" || third.Reads["b"] != "h-b" || third.Reads["c"] != "h-c" {
		t.Fatalf("LoadShared after another process's update = %+v, %v; want INT-002, reads b and c", third, err)
	}
	if second.Intent != "INT-001" || second.Reads["c"] != "" || len(second.Reads) != 2 {
		t.Fatalf("the copy handed out before the other process's update changed: %+v", second)
	}
	if _, err := mine.UpdateDerived("s", read("d")); err != nil {
		t.Fatal(err)
	}
	if err := mine.Flush(); err != nil {
		t.Fatal(err)
	}
	if third.Reads["d"] != "" || len(third.Reads) != 3 {
		t.Fatalf("a flushed update changed a copy handed out: %+v", third)
	}
	s, err := other.Load("s")
	if err != nil || s.Intent != "INT-002" || len(s.Reads) != 4 || s.Usage["read_file"].Attempts != 2 {
		t.Fatalf("after Flush another process loads %+v, %v; want INT-002, 4 reads, 2 counted calls", s, err)
	}
	if s, err := mine.LoadShared("s"); err != nil || len(s.Reads) != 4 {
		t.Fatalf("LoadShared after Flush = %+v, %v", s, err)
	}

	// A refused session is refused by LoadShared as by Load.
	if err := other.Refuse("s", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.LoadShared("s"); !errors.Is(err, ErrSessionRefused) {
		t.Fatalf("LoadShared of a refused session = %v, want ErrSessionRefused", err)
	}
	for _, id := range []string{"", "s\xff"} {
		if _, err := mine.LoadShared(id); err == nil {
			t.Fatalf("LoadShared took the id %q, which Load refuses", id)
		}
	}
}
