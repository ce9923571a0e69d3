//go:build linux

package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Items 10 and 11 of the attack corpus: what is checked is not what is
// written to, because something swaps a directory or the file itself between
// the check and the write. Workspace.Edit runs over and over while a
// goroutine keeps swapping; whatever each Edit answers, the outside file must
// never be written, and nothing may be created or removed outside (the
// outside directory's mtime would show even a temporary file that was
// removed again).

const raceIterations = 1500

// The outside file holds exactly what the inside one holds: the hash lock
// cannot tell them apart, only the file handling can.
const raceContent = "package f\n"

type raceWorld struct {
	t       *testing.T
	ws      *Workspace
	wsDir   string
	outDir  string
	outFile string
	outStat syscall.Stat_t // of outDir at the start
	fileMod int64          // mtime of outFile at the start
}

func newRaceWorld(t *testing.T) *raceWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &raceWorld{t: t, wsDir: filepath.Join(root, "ws"), outDir: filepath.Join(root, "outside")}
	w.outFile = filepath.Join(w.outDir, "f.txt")
	for _, d := range []string{w.wsDir + "/src/d", w.outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{w.outFile, w.wsDir + "/src/d/f.txt"} {
		if err := os.WriteFile(f, []byte(raceContent), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if w.ws, err = OpenWorkspace(w.wsDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.ws.Close() })
	// The lock directory exists before the race starts.
	if l, err := w.ws.LockFile("src/d/f.txt"); err == nil {
		l.Release()
	}
	if err := syscall.Stat(w.outDir, &w.outStat); err != nil {
		t.Fatal(err)
	}
	w.fileMod = mtime(t, w.outFile)
	return w
}

func mtime(t *testing.T, p string) int64 {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Mtim.Nano()
}

func (w *raceWorld) abs(rel string) string { return filepath.Join(w.wsDir, filepath.FromSlash(rel)) }

// exchange atomically swaps the names a and b (renameat2 RENAME_EXCHANGE),
// so that the name under attack always exists: either as the real thing or as
// the link to outside.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// swapper keeps exchanging name with decoy (a symlink or hard link to
// outside) until stopped. An Edit that goes through replaces whichever name
// held the decoy at that moment, so rearm (if set) puts a decoy back when
// neither name holds one. stop leaves a directory name as it was and reports
// how many exchanges were made.
func (w *raceWorld) swapper(name, decoy string, rearm func()) (stop func() int) {
	if err := exchange(name, decoy); err != nil {
		w.t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	if err := exchange(name, decoy); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan struct{})
	var n int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				if fi, err := os.Lstat(name); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					exchange(name, decoy)
				}
				return
			default:
			}
			if rearm != nil {
				rearm()
			}
			if exchange(name, decoy) == nil {
				n++
			}
			runtime.Gosched()
		}
	}()
	return func() int { close(done); wg.Wait(); return n }
}

// fileRearm returns a rearm function for a decoy made by mk (os.Symlink or
// os.Link) to the outside file.
func (w *raceWorld) fileRearm(name, decoy string, mk func(target, link string) error) func() {
	isDecoy := func(p string) bool {
		fi, err := os.Lstat(p)
		if err != nil {
			return false
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
		out, err := os.Stat(w.outFile)
		return err == nil && os.SameFile(fi, out)
	}
	return func() {
		if isDecoy(name) || isDecoy(decoy) {
			return
		}
		os.Remove(decoy)
		mk(w.outFile, decoy)
	}
}

// edit runs Edit on rel many times and counts the outcomes. With expect, each
// call carries the precondition the hash lock would set after the session
// read the file (through the workspace, safely) just before. The test itself
// never writes through a path the swapper is changing.
func (w *raceWorld) edit(rel string, expect bool) (ok, refused int) {
	for i := 0; i < raceIterations; i++ {
		c := &Call{Tool: "write_to_file"}
		if expect {
			seen := []byte(raceContent)
			if b, err := w.ws.ReadFile(rel); err == nil {
				seen = b
			}
			c.SetExpect(rel, Hash(seen))
		}
		_, err := w.ws.Edit(c, rel, func([]byte, bool) ([]byte, error) {
			return []byte("ATTACK\n"), nil
		})
		if err == nil {
			ok++
			continue
		}
		refused++
		// A refusal is a denial: PATH_ESCAPE for the swap, STALE_FILE for
		// the hash lock. Anything else would be fail-closed but misleading.
		if d, isDenial := AsDenial(err); !isDenial || (d.Code != PathEscape && d.Code != StaleFile) {
			w.t.Errorf("Edit under a swap returned %v (%T), want a PATH_ESCAPE or STALE_FILE denial", err, err)
			return ok, refused
		}
	}
	return ok, refused
}

func (w *raceWorld) checkOutside() {
	w.t.Helper()
	b, err := os.ReadFile(w.outFile)
	if err != nil || string(b) != raceContent {
		w.t.Errorf("THE OUTSIDE FILE WAS WRITTEN: %q %v", b, err)
	}
	if m := mtime(w.t, w.outFile); m != w.fileMod {
		w.t.Errorf("the outside file's mtime changed: it was opened for writing")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(w.outDir, &st); err != nil {
		w.t.Fatal(err)
	}
	if st.Mtim != w.outStat.Mtim || st.Ctim != w.outStat.Ctim {
		ents, _ := os.ReadDir(w.outDir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		w.t.Errorf("entries were created or removed in the outside directory (now: %v)", names)
	}
}

// Item 10: a directory on the path is swapped for a symlink to outside.
func TestEditRaceParentSwappedForSymlink(t *testing.T) {
	for _, tc := range []struct{ name, dir string }{
		{"10/src/d swapped", "src/d"},
		{"10/src swapped", "src"},
	} {
		for _, expect := range []bool{false, true} {
			name := tc.name
			if expect {
				name += " with the hash lock's precondition"
			}
			t.Run(name, func(t *testing.T) {
				w := newRaceWorld(t)
				target := w.outDir
				if tc.dir == "src" {
					// Outside then looks like src: outside/d/f.txt.
					w.outFile = filepath.Join(w.outDir, "d", "f.txt")
					os.MkdirAll(filepath.Dir(w.outFile), 0o755)
					os.WriteFile(w.outFile, []byte(raceContent), 0o644)
					syscall.Stat(w.outDir, &w.outStat)
					w.fileMod = mtime(t, w.outFile)
				}
				decoy := w.abs(tc.dir + ".swap")
				if err := os.Symlink(target, decoy); err != nil {
					t.Fatal(err)
				}
				stop := w.swapper(w.abs(tc.dir), decoy, nil)
				ok, refused := w.edit("src/d/f.txt", expect)
				swaps := stop()
				t.Logf("%d swaps; %d edits went through, %d were refused", swaps, ok, refused)
				w.checkOutside()
			})
		}
	}
}

// Item 11: the file itself is replaced, atomically, by a symlink to the
// outside file or by a hard link to it, and back.
func TestEditRaceFileSwapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(target, link string) error
	}{
		{"11/symlink", os.Symlink},
		{"11/hard link", os.Link},
	} {
		for _, expect := range []bool{false, true} {
			name := tc.name
			if expect {
				name += " with the hash lock's precondition"
			}
			t.Run(name, func(t *testing.T) {
				w := newRaceWorld(t)
				decoy := w.abs("src/d/f.swap")
				if err := tc.make(w.outFile, decoy); err != nil {
					t.Skip(err)
				}
				// A hard link changes the outside file's ctime, not its mtime.
				w.fileMod = mtime(t, w.outFile)
				syscall.Stat(w.outDir, &w.outStat)
				stop := w.swapper(w.abs("src/d/f.txt"), decoy, w.fileRearm(w.abs("src/d/f.txt"), decoy, tc.make))
				ok, refused := w.edit("src/d/f.txt", expect)
				swaps := stop()
				t.Logf("%d swaps; %d edits went through, %d were refused", swaps, ok, refused)
				w.checkOutside()
			})
		}
	}
}

// Reads race the same swaps: ReadFile must never return the outside file.
func TestReadFileRace(t *testing.T) {
	for _, tc := range []struct {
		name, swapped, decoyTarget string
		link                       func(target, link string) error
	}{
		{"10/read, parent swapped", "src/d", "", os.Symlink},
		{"11/read, file swapped for a symlink", "src/d/f.txt", "f.txt", os.Symlink},
		{"11/read, file swapped for a hard link", "src/d/f.txt", "f.txt", os.Link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRaceWorld(t)
			os.WriteFile(w.outFile, []byte("OUTSIDE-SECRET\n"), 0o644)
			decoy := w.abs(tc.swapped + ".swap")
			if err := tc.link(filepath.Join(w.outDir, tc.decoyTarget), decoy); err != nil {
				t.Skip(err)
			}
			stop := w.swapper(w.abs(tc.swapped), decoy, nil)
			got := 0
			for i := 0; i < raceIterations*2; i++ {
				b, err := w.ws.ReadFile("src/d/f.txt")
				if d, isDenial := AsDenial(err); err != nil && (!isDenial || d.Code != PathEscape) {
					stop()
					t.Fatalf("ReadFile under a swap returned %v (%T), want a PATH_ESCAPE denial", err, err)
				}
				if err != nil {
					continue
				}
				got++
				if bytes.Contains(b, []byte("OUTSIDE-SECRET")) {
					stop()
					t.Fatalf("ReadFile returned the outside file's content")
				}
			}
			swaps := stop()
			t.Logf("%d swaps; %d of %d reads succeeded", swaps, got, raceIterations*2)
		})
	}
}
