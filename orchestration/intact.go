package orchestration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
)

// CheckIntact refuses to go on when the .orchestration directory, or one of
// the directories and files intentgate writes in it, has been replaced by a
// symlink or something else that is not what intentgate made: writing through
// it would put the ledger, sessions or locks wherever the link points, outside
// the workspace. A person must repair it; until then every call is refused.
//
// With names, only the directory and those entries are checked, so that a
// writer checks what it is about to write through and can still record a
// tampering elsewhere.
func CheckIntact(orchDir string, names ...string) error {
	// A directory unchanged since a listing showed all of it intact is
	// intact, whatever the names.
	if intactKept(orchDir) {
		return nil
	}
	// With names, an Lstat each costs less than a listing.
	if len(names) == 0 && intactByListing(orchDir) {
		return nil
	}
	fi, err := os.Lstat(orchDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cannot check %s: %w", orchDir, err)
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is not a plain directory (%s); it may have been replaced to redirect intentgate's records: restore it", orchDir, describeMode(fi.Mode()))
	}
	for _, sub := range intactEntries {
		if len(names) > 0 && !slices.Contains(names, sub.name) {
			continue
		}
		p := filepath.Join(orchDir, sub.name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot check %s: %w", p, err)
		}
		if sub.dir && (!fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) || !sub.dir && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s has been replaced by a %s; it may redirect intentgate's records outside the workspace: restore it", p, describeMode(fi.Mode()))
		}
	}
	return nil
}

// intactEntries are what intentgate writes inside .orchestration.
var intactEntries = []struct {
	name string
	dir  bool
}{{"sessions", true}, {"locks", true}, {"index", true}, {"tmp", true}, {"journal", true}, {LedgerName, false}, {LedgerName + ".lock", false},
	{IntentMapName, false}, {IntentMapSummaryName, false}, {IntentMapLockName, false}}

// intactSeen keeps, per .orchestration directory, the stamp it had when a
// listing last showed it intact. An entry cannot be replaced, added or
// removed without changing the directory's stamp (its ctime at least), so
// while a stat proves the stamp unchanged (fsx.Seen) the listing would
// show the same entries, and is not taken again.
var intactSeen struct {
	sync.Mutex
	m map[string]fsx.Seen
}

// intactByListing is CheckIntact's answer from one listing of orchDir
// (opened without following a symlink; the entries' types come with the
// listing): true when it shows everything intact. Anything else (a type
// not given, an entry not what it should be, an error) is left to the
// entry-by-entry check, which says what is wrong.
func intactByListing(orchDir string) bool {
	now := time.Now()
	ok, st, settle := intactListing(orchDir)
	var seen fsx.Seen
	if ok {
		seen.Note(st, now, settle)
	}
	intactSeen.Lock()
	if intactSeen.m == nil || len(intactSeen.m) >= 64 {
		intactSeen.m = map[string]fsx.Seen{}
	}
	intactSeen.m[orchDir] = seen
	intactSeen.Unlock()
	return ok
}

// intactKept reports whether a stat of orchDir proves it unchanged since a
// listing showed it intact.
func intactKept(orchDir string) bool {
	now := time.Now()
	intactSeen.Lock()
	seen := intactSeen.m[orchDir]
	intactSeen.Unlock()
	if !seen.Live(now) {
		return false
	}
	st, err := fsx.StampOf(orchDir, false)
	return err == nil && seen.Holds(st, now)
}

// intactListing lists orchDir; true when it shows everything intact, with
// the directory's stamp taken before the listing.
func intactListing(orchDir string) (bool, fsx.Stamp, time.Duration) {
	f, st, settle, err := openDirNoFollow(orchDir)
	if err != nil {
		return false, st, settle
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return false, st, settle
	}
	for _, e := range entries {
		for _, sub := range intactEntries {
			if sub.name != e.Name() {
				continue
			}
			t := e.Type()
			if sub.dir && t != fs.ModeDir || !sub.dir && !t.IsRegular() {
				return false, st, settle
			}
		}
	}
	return true, st, settle
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	}
	return "special file (" + m.Type().String() + ")"
}
