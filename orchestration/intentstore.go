package orchestration

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// intentsDebounce coalesces the bursts of events one save produces (write
// temp, rename, chmod) into a single reload.
const intentsDebounce = 50 * time.Millisecond

// intentsRacyWindow is how close to the time we read the file its mtime may
// be before size+mtime+identity can no longer prove it unchanged: a write in
// the same timestamp tick, keeping the size, is invisible to stat. Within the
// window the bytes are compared instead (git calls such entries racily clean).
// Two seconds covers the coarsest common timestamp resolution (FAT).
const intentsRacyWindow = 2 * time.Second

// IntentStore keeps the intents file loaded and current. A bad edit keeps the
// last good set in force; a missing or unreadable file denies (fail closed).
// It is safe for concurrent use.
type IntentStore struct {
	path string

	mu      sync.Mutex
	good    *IntentSet  // last set that parsed, nil since the file went missing
	problem error       // why the file on disk is not in force, nil if it is
	fi      os.FileInfo // stat of the version last examined, nil if none
	sum     [32]byte    // sha256 of the bytes last examined
	readAt  time.Time   // when they were read

	w    *fsnotify.Watcher // nil when watching is unavailable
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// OpenIntentStore loads the intents file at path, failing if it is missing or
// invalid. It does not watch the file: every call of Current and Problem
// checks it first (a stat, and rarely a read), which is all a process that
// answers calls needs. A watch on the directory would wake the process on
// every ledger append by any process, since the ledger lives next to the
// intents file; Watch starts one for a process that wants edits noticed
// while it is idle.
func OpenIntentStore(path string) (*IntentStore, error) {
	s := &IntentStore{path: path, done: make(chan struct{})}
	s.refresh(true)
	if s.problem != nil {
		return nil, s.problem
	}
	return s, nil
}

// Watch starts watching the intents file's directory, so that an edit is
// examined when it is saved rather than at the next call. Watching is an
// optimization: if it cannot start (inotify limits, say), every call still
// checks the file itself. It does nothing after Close or a first Watch.
func (s *IntentStore) Watch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	if s.w != nil {
		return
	}
	if w, err := fsnotify.NewWatcher(); err == nil {
		if err := w.Add(filepath.Dir(s.path)); err == nil {
			s.w = w
			s.wg.Add(1)
			go s.watch(w)
		} else {
			w.Close()
		}
	}
}

// Current returns the intent set in force: the file's, or while the file
// holds a bad edit, the last good one. Before answering it checks the file (a
// stat, and rarely a read), so a one-shot process never depends on when
// watcher events arrive. It returns an error when the file is missing or
// unreadable, and after that until a valid file is back.
func (s *IntentStore) Current() (*IntentSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked(false)
	if s.good == nil {
		return nil, s.problem
	}
	return s.good, nil
}

// Problem returns why the file on disk is not the one in force (it is
// invalid, missing or unreadable), or nil when it is.
func (s *IntentStore) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked(false)
	return s.problem
}

// Close stops watching. The store still answers afterwards, by stat alone.
func (s *IntentStore) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		close(s.done)
		w := s.w
		s.mu.Unlock()
		if w != nil {
			err = w.Close()
		}
		s.wg.Wait()
	})
	return err
}

func (s *IntentStore) watch(w *fsnotify.Watcher) {
	defer s.wg.Done()
	base := filepath.Base(s.path)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-s.done:
			timer.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) == base {
				timer.Reset(intentsDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// Lost events (queue overflow) may have been ours.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				timer.Reset(intentsDebounce)
			}
		case <-timer.C:
			s.refresh(true)
		}
	}
}

func (s *IntentStore) refresh(force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked(force)
}

// refreshLocked brings the store up to date with the file. Unless force is
// set, a file whose stat is unchanged and not racy is taken as unchanged.
func (s *IntentStore) refreshLocked(force bool) {
	fi, err := os.Stat(s.path)
	if err != nil {
		s.lost()
		if errors.Is(err, fs.ErrNotExist) {
			s.problem = fmt.Errorf("intents file %s is missing: %w", s.path, err)
		} else {
			s.problem = fmt.Errorf("intents file %s: %w", s.path, err)
		}
		return
	}
	if !force && s.fi != nil && intentsSameStat(s.fi, fi) && fi.ModTime().Before(s.readAt.Add(-intentsRacyWindow)) {
		return
	}
	readAt := time.Now()
	data, err := os.ReadFile(s.path)
	if err != nil {
		s.lost()
		s.problem = fmt.Errorf("intents file %s: %w", s.path, err)
		return
	}
	sum := sha256.Sum256(data)
	same := s.fi != nil && sum == s.sum
	intentsPinIdentity(fi)
	s.fi, s.sum, s.readAt = fi, sum, readAt
	if same {
		return
	}
	set, err := ParseIntents(s.path, data)
	if err != nil {
		s.problem = err
		return
	}
	s.good, s.problem = set, nil
}

// lost forgets the file. The last good set goes too: once the file has been
// deleted, a broken file appearing in its place must not bring back intents
// from before the deletion.
func (s *IntentStore) lost() {
	s.fi, s.good = nil, nil
}

// intentsSameStat reports whether two stats describe the same unchanged
// file: same size, same mtime and the same file (inode, or file index on
// Windows), so that a rename over the file is noticed even within one tick.
func intentsSameStat(a, b os.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// intentsPinIdentity makes fi remember which file it describes. On Windows
// os.SameFile looks the file index up by path on first use, which would find
// the replacement, not the file that was read; asking once now caches it.
func intentsPinIdentity(fi os.FileInfo) {
	os.SameFile(fi, fi)
}
