package orchestration

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/internal/fsx"
)

// ledgerTestSteps counts the ledger's fsyncs and skipped syncs while a test
// runs, through ledgerObserver.
type ledgerTestSteps struct {
	mu      sync.Mutex
	fsyncs  int // begun
	covered int
}

func ledgerTestCount(t *testing.T) *ledgerTestSteps {
	t.Helper()
	c := &ledgerTestSteps{}
	ledgerObserver = func(step string, _ *os.File, _ int64) {
		c.mu.Lock()
		defer c.mu.Unlock()
		switch step {
		case "fsync-begin":
			c.fsyncs++
		case "covered":
			c.covered++
		}
	}
	t.Cleanup(func() { ledgerObserver = nil })
	return c
}

func (c *ledgerTestSteps) get() (fsyncs, covered int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fsyncs, c.covered
}

// ledgerTestWriteOnly writes rec's line without syncing it, as a process
// that has just let the ledger's lock go.
func ledgerTestWriteOnly(t *testing.T, l *Ledger, rec *Record) (ledgerHandle, ledgerMark) {
	t.Helper()
	_, h, mark, err := l.writeLine(rec)
	if err != nil {
		t.Fatal(err)
	}
	return h, mark
}

// ledgerTestNeedsSharing skips where the ledger shares no fsync across
// processes (a FileInfo holds no stamp there: Windows).
func ledgerTestNeedsSharing(t *testing.T) {
	t.Helper()
	fi, err := os.Stat(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if !fsx.StampInfo(fi).Known() {
		t.Skip("no fsync is shared across processes on " + runtime.GOOS)
	}
}

func ledgerTestOpen(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Two Ledgers on one file stand for two processes: each has its own lock
// handles and its own state, and they meet only through the files, as
// processes do (flock locks belong to the open file, not the process).
//
// A's line is written, then B's; B's fsync began after both were written,
// so A's sync finds B's mark and skips its own fsync. A line written after
// B's fsync began is not covered by it.
func TestLedgerSyncSharedAcrossProcesses(t *testing.T) {
	ledgerTestNeedsSharing(t)
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	a, b := ledgerTestOpen(t, path), ledgerTestOpen(t, path)
	count := ledgerTestCount(t)

	ha, ma := ledgerTestWriteOnly(t, a, ledgerTestRecord(t, "INT-001", 0))
	hb, mb := ledgerTestWriteOnly(t, b, ledgerTestRecord(t, "INT-001", 1))
	if err := b.syncThrough(hb, mb); err != nil {
		t.Fatal(err)
	}
	if f, c := count.get(); f != 1 || c != 0 {
		t.Fatalf("after B's sync: %d fsyncs, %d covered; want 1, 0", f, c)
	}
	if err := a.syncThrough(ha, ma); err != nil {
		t.Fatal(err)
	}
	if f, c := count.get(); f != 1 || c != 1 {
		t.Fatalf("after A's sync of a line B's fsync covered: %d fsyncs, %d covered; want 1, 1", f, c)
	}

	// Written after B's mark: A must fsync for itself.
	ha, ma = ledgerTestWriteOnly(t, a, ledgerTestRecord(t, "INT-001", 2))
	if err := a.syncThrough(ha, ma); err != nil {
		t.Fatal(err)
	}
	if f, c := count.get(); f != 2 || c != 1 {
		t.Fatalf("after A's sync of a line written after B's fsync: %d fsyncs, %d covered; want 2, 1", f, c)
	}
	// And B's next line, written after A's fsync, is not covered either.
	hb, mb = ledgerTestWriteOnly(t, b, ledgerTestRecord(t, "INT-001", 3))
	if err := b.syncThrough(hb, mb); err != nil {
		t.Fatal(err)
	}
	if f, _ := count.get(); f != 3 {
		t.Fatalf("B's second line was acknowledged without an fsync that began after it (%d fsyncs)", f)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 4 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
}

// The property group commit must keep, checked at the moment of every
// acknowledgement: among the fsyncs that had returned, one began when the
// file already held the record's whole line. The test measures that itself:
// just before each fsync begins, it takes the file's size (fstat), and every
// byte below it is in the file before that fsync begins. Four Ledgers (four
// processes, as above) of two goroutines each append at once, so fsyncs are
// shared within and across them.
func TestLedgerAckFollowsAnFsyncBegunAfterTheWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	var mu sync.Mutex
	begun := 0                    // fsyncs begun so far; the n-th has number n
	running := map[*os.File]int{} // the fsync running on a handle (one at a time each)
	sizeAt := map[int]int64{}     // fsync number -> the file's size just before it began
	durable := int64(0)           // the most any returned fsync covered
	written := 0
	var bad []string
	ledgerObserver = func(step string, f *os.File, off int64) {
		mu.Lock()
		defer mu.Unlock()
		switch step {
		case "written":
			written++
		case "fsync-begin":
			begun++
			running[f] = begun
			fi, err := f.Stat()
			if err != nil {
				bad = append(bad, err.Error())
				return
			}
			sizeAt[begun] = fi.Size()
		case "fsync-end":
			durable = max(durable, sizeAt[running[f]])
		case "acked":
			if durable < off {
				bad = append(bad, fmt.Sprintf("line ending at %d acknowledged when the fsyncs that returned covered %d bytes", off, durable))
			}
		}
	}
	t.Cleanup(func() { ledgerObserver = nil })

	const ledgers, goroutines, each = 4, 2, 25
	var wg sync.WaitGroup
	for i := range ledgers {
		l := ledgerTestOpen(t, path)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range each {
					if err := l.Append(ledgerTestRecord(t, "INT-001", (i*goroutines+g)*each+n)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bad {
		t.Error(b)
	}
	const total = ledgers * goroutines * each
	if written != total {
		t.Errorf("%d lines written, want %d", written, total)
	}
	t.Logf("%d appends, %d fsyncs", total, begun)
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != total || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
}

// A mark that is garbage, torn, forged without the key, stale or about
// another file never makes a process skip its own fsync; neither does a
// mark file that is not a regular file. Each case: B writes and syncs
// (leaving a good mark that covers A's line), the mark is then damaged, and
// A's sync must still fsync.
func TestLedgerSyncMarkDistrusted(t *testing.T) {
	ledgerTestNeedsSharing(t)
	key, err := cachedWorkspaceKey(t.TempDir()) // some other workspace's key
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, path string, mark []byte)
	}{
		{"good mark (control: A skips)", nil},
		{"empty", func(t *testing.T, path string, _ []byte) { ledgerTestPut(t, path+".sync.lock", nil) }},
		{"garbage", func(t *testing.T, path string, _ []byte) {
			ledgerTestPut(t, path+".sync.lock", bytes.Repeat([]byte{0xa5}, ledgerMarkSize))
		}},
		{"torn", func(t *testing.T, path string, mark []byte) {
			ledgerTestPut(t, path+".sync.lock", mark[:ledgerMarkSize/2])
		}},
		{"one bit flipped in the offset", func(t *testing.T, path string, mark []byte) {
			m := bytes.Clone(mark)
			m[24] ^= 1
			ledgerTestPut(t, path+".sync.lock", m)
		}},
		{"MAC of another workspace's key, offset far beyond", func(t *testing.T, path string, mark []byte) {
			m, _ := parseLedgerSyncMark(mark, ledgerTestKey(t, path))
			m.end += 1 << 20
			ledgerTestPut(t, path+".sync.lock", m.encode(key))
		}},
		{"right key, offset past the end of the file", func(t *testing.T, path string, mark []byte) {
			m, _ := parseLedgerSyncMark(mark, ledgerTestKey(t, path))
			m.end += 1 << 20
			ledgerTestPut(t, path+".sync.lock", m.encode(ledgerTestKey(t, path)))
		}},
		{"right key, another inode", func(t *testing.T, path string, mark []byte) {
			m, _ := parseLedgerSyncMark(mark, ledgerTestKey(t, path))
			m.ino++
			ledgerTestPut(t, path+".sync.lock", m.encode(ledgerTestKey(t, path)))
		}},
		{"right key, a line that is not there", func(t *testing.T, path string, mark []byte) {
			m, _ := parseLedgerSyncMark(mark, ledgerTestKey(t, path))
			m.sum[0] ^= 1
			ledgerTestPut(t, path+".sync.lock", m.encode(ledgerTestKey(t, path)))
		}},
		{"right key, not a line boundary", func(t *testing.T, path string, mark []byte) {
			m, _ := parseLedgerSyncMark(mark, ledgerTestKey(t, path))
			m.end--
			m.size--
			ledgerTestPut(t, path+".sync.lock", m.encode(ledgerTestKey(t, path)))
		}},
		{"stale: the ledger truncated and rewritten in place", func(t *testing.T, path string, _ []byte) {
			// The mark still names the right file and offset, but the
			// bytes there are other lines now, never synced.
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			other := bytes.Clone(b)
			copy(other[bytes.LastIndex(other, []byte(`"id":"`))+6:], "01900000-0000-7000-8000-000000000000")
			if _, err := f.WriteAt(other, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink", func(t *testing.T, path string, _ []byte) {
			os.Remove(path + ".sync.lock")
			ledgerTestPut(t, path+".elsewhere", nil)
			if err := os.Symlink(path+".elsewhere", path+".sync.lock"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a FIFO", func(t *testing.T, path string, _ []byte) {
			os.Remove(path + ".sync.lock")
			if err := ledgerTestMkfifo(path + ".sync.lock"); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}},
		{"a directory", func(t *testing.T, path string, _ []byte) {
			os.Remove(path + ".sync.lock")
			if err := os.Mkdir(path+".sync.lock", 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
			b := ledgerTestOpen(t, path)
			if err := b.Append(ledgerTestRecord(t, "INT-001", 0)); err != nil {
				t.Fatal(err)
			}
			a := ledgerTestOpen(t, path)
			count := ledgerTestCount(t)
			ha, ma := ledgerTestWriteOnly(t, a, ledgerTestRecord(t, "INT-001", 1))
			hb, mb := ledgerTestWriteOnly(t, b, ledgerTestRecord(t, "INT-001", 2))
			if err := b.syncThrough(hb, mb); err != nil {
				t.Fatal(err)
			}
			mark, err := os.ReadFile(path + ".sync.lock")
			if err != nil || len(mark) != ledgerMarkSize {
				t.Fatalf("B left no mark (%d bytes, %v)", len(mark), err)
			}
			if tc.damage != nil {
				tc.damage(t, path, mark)
			}
			if err := a.syncThrough(ha, ma); err != nil {
				t.Fatal(err)
			}
			fsyncs, covered := count.get()
			if tc.damage == nil {
				if fsyncs != 1 || covered != 1 {
					t.Fatalf("good mark: %d fsyncs, %d covered; want A to skip its fsync (1, 1)", fsyncs, covered)
				}
				return
			}
			if fsyncs != 2 || covered != 0 {
				t.Fatalf("%d fsyncs, %d covered: A trusted the mark and skipped its fsync (want 2, 0)", fsyncs, covered)
			}
			// Appends go on, whatever is in the mark's place.
			if err := a.Append(ledgerTestRecord(t, "INT-001", 3)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func ledgerTestPut(t *testing.T, path string, b []byte) {
	t.Helper()
	// In place, as a writer holding the file open would see it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func ledgerTestKey(t *testing.T, ledgerPath string) []byte {
	t.Helper()
	k, err := cachedWorkspaceKey(filepath.Dir(filepath.Dir(ledgerPath)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A lock file removed or replaced while a Ledger holds it open: the next
// append locks the file the path names now, so that it excludes processes
// that open the path afresh.
func TestLedgerHeldLockFollowsReplacedLockFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	l := ledgerTestOpen(t, path)
	for i, change := range []func(){
		func() { os.Remove(path + ".lock") },
		func() {
			ledgerTestPut(t, path+".lock.new", nil)
			if err := os.Rename(path+".lock.new", path+".lock"); err != nil {
				t.Fatal(err)
			}
		},
	} {
		if err := l.Append(ledgerTestRecord(t, "INT-001", 2*i)); err != nil {
			t.Fatal(err)
		}
		change()
		if err := l.Append(ledgerTestRecord(t, "INT-001", 2*i+1)); err != nil {
			t.Fatal(err)
		}
		pi, err := os.Lstat(path + ".lock")
		if err != nil {
			t.Fatal(err)
		}
		if l.lock.fi == nil || !os.SameFile(pi, l.lock.fi) {
			t.Fatalf("change %d: the Ledger still locks the old lock file", i)
		}
	}
}

// Appends by another process (here another Ledger), and a ledger truncated
// or rewritten behind the Ledger's back, are seen: the next record links to
// the line that is last now, not to the one this Ledger wrote.
func TestLedgerLinksAfterOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	a, b := ledgerTestOpen(t, path), ledgerTestOpen(t, path)
	n := 0
	next := func() *Record { n++; return ledgerTestRecord(t, "INT-001", n) }
	for range 3 {
		if err := a.Append(next()); err != nil {
			t.Fatal(err)
		}
		if err := b.Append(next()); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append(next()); err != nil {
		t.Fatal(err)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 7 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	// Cut a's last line off behind its back (in place: same inode).
	lines := ledgerTestLines(t, path)
	lines = lines[:len(lines)-1]
	ledgerTestWrite(t, path, lines)
	if err := a.Append(next()); err != nil {
		t.Fatal(err)
	}
	lines = ledgerTestLines(t, path)
	rec, err := ReadLedgerLine(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if want := LineLink(bytes.TrimSuffix(lines[len(lines)-2], []byte("\n"))); rec.Meta.Prev != want {
		t.Fatalf("prev = %s, want the link of the line now before it %s", rec.Meta.Prev, want)
	}
}

func FuzzLedgerSyncMark(f *testing.F) {
	key := bytes.Repeat([]byte{7}, 32)
	line := []byte(`{"id":"x"}`)
	good := ledgerSyncMark{dev: 1, ino: 2, end: int64(len(line)) + 1, size: int64(len(line)) + 1, sum: sha256.Sum256(line)}
	f.Add(good.encode(key))
	f.Add([]byte("igsync1\n"))
	f.Add(bytes.Repeat([]byte{0xff}, ledgerMarkSize))
	dir := f.TempDir()
	lf, err := os.Create(filepath.Join(dir, "ledger"))
	if err != nil {
		f.Fatal(err)
	}
	defer lf.Close()
	lf.Write(append(append(bytes.Clone(line), '\n'), "{\"id\":\"y\"}\r\n"...))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := parseLedgerSyncMark(b, key)
		if ok && !bytes.Equal(m.encode(key), b[:ledgerMarkSize]) {
			t.Fatalf("accepted a mark that is not what its fields encode to")
		}
		if ok {
			m.holds(lf) // must not panic on any numbers the MAC let through
		}
		// The same bytes read as numbers, without the MAC, must not make
		// holds misbehave either.
		if len(b) >= 16 {
			var raw ledgerSyncMark
			for i := range 8 {
				raw.end |= int64(b[i]) << (8 * i)
				raw.size |= int64(b[8+i]) << (8 * i)
			}
			if raw.holds(lf) {
				t.Fatalf("holds(end %d, size %d) with a sum of zero", raw.end, raw.size)
			}
		}
	})
}
