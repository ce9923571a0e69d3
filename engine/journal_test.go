//go:build unix

package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/intentgate/intentgate/internal/journal"
)

func editTo(t *testing.T, w *Workspace, c *Call, rel, content string) {
	t.Helper()
	if _, err := w.Edit(c, rel, func([]byte, bool) ([]byte, error) { return []byte(content), nil }); err != nil {
		t.Fatalf("Edit(%s): %v", rel, err)
	}
}

func slotFiles(t *testing.T, jd string) []string {
	t.Helper()
	des, err := os.ReadDir(jd)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if strings.HasSuffix(de.Name(), journal.SlotSuffix) {
			out = append(out, de.Name())
		}
	}
	return out
}

// One process's writes share one slot: the same file (same inode) holds
// each write's entry while it is pending, is marked done once the record is
// in, and is removed when the workspace is closed.
func TestJournalSlotRewrittenInPlace(t *testing.T) {
	ws := t.TempDir()
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	var ino uint64
	for i, rel := range []string{"a.txt", "b.txt", "a.txt", "deep/c.txt"} {
		c := &Call{ID: string(rune('1' + i)), Session: "s", Tool: "write_to_file", WS: w}
		editTo(t, w, c, rel, strings.Repeat("x", i+1))
		names := slotFiles(t, jd)
		if len(names) != 1 {
			t.Fatalf("write %d: slots %v, want 1", i, names)
		}
		fi, err := os.Stat(filepath.Join(jd, names[0]))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ino = fi.Sys().(*syscall.Stat_t).Ino
		} else if got := fi.Sys().(*syscall.Stat_t).Ino; got != ino {
			t.Fatalf("write %d: the slot is a new file (inode %d, was %d)", i, got, ino)
		}
		entries, err := ReadJournal(jd)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := entries[names[0]]
		if len(entries) != 1 || !ok || e.Path != rel || e.CallID != c.ID || e.Abandoned() {
			t.Fatalf("write %d: journal %+v, want %s pending, owner alive", i, entries, rel)
		}
		c.JournalDone(rel)
		if entries, _ := ReadJournal(jd); len(entries) != 0 {
			t.Fatalf("write %d: journal after JournalDone: %+v, want nothing pending", i, entries)
		}
		b, _ := os.ReadFile(filepath.Join(jd, names[0]))
		if _, st := journal.ParseSlot(b); st != journal.Finished {
			t.Fatalf("write %d: slot state %v after JournalDone, want Finished", i, st)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if names := slotFiles(t, jd); len(names) != 0 {
		t.Fatalf("slots left after Close: %v", names)
	}
}

// A write whose record never comes (its call is left pending) keeps its
// slot: the next write takes another, and Close leaves the pending one for
// recovery instead of removing it.
func TestJournalPendingSlotKeptAtClose(t *testing.T) {
	ws := t.TempDir()
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	editTo(t, w, &Call{ID: "1", Session: "s", WS: w}, "a.txt", "one\n")
	c2 := &Call{ID: "2", Session: "s", WS: w}
	editTo(t, w, c2, "b.txt", "two\n")
	c2.JournalDone("b.txt")
	if n := len(slotFiles(t, jd)); n != 2 {
		t.Fatalf("%d slots, want 2 (a.txt's still pending)", n)
	}
	w.Close()
	entries, err := ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	if len(slotFiles(t, jd)) != 1 || len(entries) != 1 {
		t.Fatalf("after Close: slots %v, journal %+v; want a.txt's slot alone", slotFiles(t, jd), entries)
	}
	for name, e := range entries {
		if e.Path != "a.txt" || !e.Abandoned() {
			t.Fatalf("%s: %+v, want a.txt, abandoned (its owner closed it)", name, e)
		}
		// The next workspace does not take it over: it is recovery's.
		w2, err := OpenWorkspace(ws)
		if err != nil {
			t.Fatal(err)
		}
		c := &Call{ID: "3", Session: "s", WS: w2}
		editTo(t, w2, c, "c.txt", "three\n")
		if got, _ := ReadJournal(jd); got[name].Path != "a.txt" || len(got) != 2 {
			t.Fatalf("after another write: %+v, want a.txt's entry untouched beside c.txt's", got)
		}
		c.JournalDone("c.txt")
		w2.Close()
		if err := DropJournalEntry(jd, name); err != nil {
			t.Fatal(err)
		}
	}
	if names := slotFiles(t, jd); len(names) != 0 {
		t.Fatalf("slots left after the drop and Close: %v", names)
	}
}

// Slots that a process which is gone left with nothing pending (done,
// empty, torn by a crash in the middle of its rewrite, garbage) hold no
// entry, and the next process takes one over instead of creating a file.
func TestJournalTornAndDoneSlots(t *testing.T) {
	ws := t.TempDir()
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	if err := os.MkdirAll(jd, 0o755); err != nil {
		t.Fatal(err)
	}
	entry, _ := json.Marshal(JournalEntry{Path: "a.txt", After: strings.Repeat("0", 64), Pid: 1})
	good := journal.AppendSlot(nil, entry)
	done := append([]byte(nil), good...)
	done[journal.StateOffset] = journal.Done
	// A rewrite cut short: the new header over the old entry's bytes.
	longer, _ := json.Marshal(JournalEntry{Path: "some/much/longer/path.txt", After: strings.Repeat("1", 64), Pid: 1})
	torn := append(journal.AppendSlot(nil, longer)[:100], good[100:]...)
	files := map[string][]byte{
		"done.slot":    done,
		"empty.slot":   nil,
		"torn.slot":    torn,
		"garbage.slot": []byte("IGJ1 P 00000010 not a sum\n{}"),
		"cut.slot":     good[:len(good)-5],
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(jd, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("ReadJournal = %+v, want no pending entry", entries)
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	c := &Call{ID: "1", Session: "s", WS: w}
	editTo(t, w, c, "b.txt", "b\n")
	if n := len(slotFiles(t, jd)); n != len(files) {
		t.Fatalf("%d slot files after a write, want %d: one was taken over, none created", n, len(files))
	}
	entries, _ = ReadJournal(jd)
	if len(entries) != 1 {
		t.Fatalf("journal %+v, want b.txt's entry", entries)
	}
	for name, e := range entries {
		if _, ok := files[name]; !ok || e.Path != "b.txt" || e.Abandoned() {
			t.Fatalf("%s: %+v, want b.txt in a slot taken over", name, e)
		}
	}
	c.JournalDone("b.txt")
	w.Close()
}

// An entry file as older builds wrote it (one JSON file per change) is
// still read, as abandoned when its process is gone, and dropped.
func TestJournalOlderEntryFile(t *testing.T) {
	jd := t.TempDir()
	// A process that is gone: started and waited for.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	old := `{"path":"src/f.txt","existed":true,"before_sha256":"01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee","after_sha256":"7b4d8a5b1e6e0a1a0d5c5f6f2c4e3b8d9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d","session":"s","call_id":"2","tool":"write_to_file","agent":{"name":"t","model":"m"},"time":"2026-11-24T22:00:00Z","pid":` +
		itoa(cmd.Process.Pid) + `}`
	name := JournalName("2", "s", "src/f.txt")
	if err := os.WriteFile(filepath.Join(jd, name), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := entries[name]
	if !ok || e.Path != "src/f.txt" || e.CallID != "2" || !e.Existed || !e.Abandoned() {
		t.Fatalf("ReadJournal = %+v, want the older entry, abandoned", entries)
	}
	if err := DropJournalEntry(jd, name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(jd, name)); !os.IsNotExist(err) {
		t.Fatalf("the older entry is still there: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// slotOwnerEnv makes the test binary a process that writes once, leaves the
// entry pending, says so, and waits to be killed.
const slotOwnerEnv = "INTENTGATE_TEST_SLOT_OWNER"

func TestSlotOwnerHelper(t *testing.T) {
	ws := os.Getenv(slotOwnerEnv)
	if ws == "" {
		t.Skip("the helper of TestJournalSlotOfLiveOwner")
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	editTo(t, w, &Call{ID: "9", Session: "owner", Tool: "write_to_file", WS: w}, "a.txt", "new\n")
	os.Stdout.WriteString("pending\n")
	time.Sleep(time.Minute)
}

// A slot whose owner lives is left alone: its pending entry is not
// abandoned, recovery's drop does not touch it, and no other process takes
// it over. Once its owner is SIGKILLed, the entry is abandoned (for
// recovery) and still never taken over.
func TestJournalSlotOfLiveOwner(t *testing.T) {
	ws := t.TempDir()
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSlotOwnerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), slotOwnerEnv+"="+ws)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the owner ended before its write: %v", err)
		}
		if l == "pending\n" {
			break
		}
	}
	entries, err := ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("journal %+v, want the owner's entry", entries)
	}
	var name string
	for n, e := range entries {
		name = n
		if e.Path != "a.txt" || e.Session != "owner" || e.Abandoned() {
			t.Fatalf("%s: %+v, want a.txt of a live owner", n, e)
		}
	}
	before, _ := os.ReadFile(filepath.Join(jd, name))
	if err := DropJournalEntry(jd, name); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := &Call{ID: "1", Session: "other", WS: w}
	editTo(t, w, c, "b.txt", "b\n")
	c.JournalDone("b.txt")
	if after, err := os.ReadFile(filepath.Join(jd, name)); err != nil || string(after) != string(before) {
		t.Fatalf("the live owner's slot was touched: %v\n%q\nwas\n%q", err, after, before)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	entries, err = ReadJournal(jd)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := entries[name]; !ok || !e.Abandoned() {
		t.Fatalf("after the owner's SIGKILL: %+v, want its entry abandoned", entries)
	}
	c = &Call{ID: "2", Session: "other", WS: w}
	editTo(t, w, c, "b.txt", "bb\n")
	c.JournalDone("b.txt")
	w2, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	c = &Call{ID: "3", Session: "other", WS: w2}
	editTo(t, w2, c, "c.txt", "c\n")
	c.JournalDone("c.txt")
	w2.Close()
	if after, err := os.ReadFile(filepath.Join(jd, name)); err != nil || string(after) != string(before) {
		t.Fatalf("the killed owner's pending slot was taken over: %v\n%q", err, after)
	}
	if err := DropJournalEntry(jd, name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(jd, name)); !os.IsNotExist(err) {
		t.Fatalf("the recovered slot is still there: %v", err)
	}
}

// A slot name that is also another file's (a workspace file holding a
// pending slot's bytes, linked into the journal; or a backup made with hard
// links): dropping the entry removes the journal's name and never writes
// the done mark into the file, whose other name would change with it.
func TestJournalSlotHardLinkNotActedOn(t *testing.T) {
	ws := t.TempDir()
	jd := filepath.Join(ws, filepath.FromSlash(JournalDir))
	if err := os.MkdirAll(jd, 0o755); err != nil {
		t.Fatal(err)
	}
	entry, _ := json.Marshal(JournalEntry{Path: "gone.txt", After: strings.Repeat("0", 64), Session: "s", CallID: "9", Pid: 1})
	content := journal.AppendSlot(nil, entry)
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(notes, filepath.Join(jd, "x.slot")); err != nil {
		t.Fatal(err)
	}
	if err := DropJournalEntry(jd, "x.slot"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(notes); string(b) != string(content) {
		t.Errorf("notes.txt changed through its link in the journal: byte %d is %q", journal.StateOffset, b[journal.StateOffset])
	}
	if _, err := os.Lstat(filepath.Join(jd, "x.slot")); !os.IsNotExist(err) {
		t.Errorf("the journal's name is still there: %v", err)
	}
	if entries, _ := ReadJournal(jd); len(entries) != 0 {
		t.Errorf("ReadJournal = %+v after the drop", entries)
	}
}
