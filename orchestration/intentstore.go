package orchestration

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/intentgate/intentgate/internal/fsx"
)

// intentsDebounce coalesces the bursts of events one save produces (write
// temp, rename, chmod) into a single reload.
const intentsDebounce = 50 * time.Millisecond

// IntentStore keeps the intents file loaded and current. A bad edit keeps the
// last good set in force; a missing or unreadable file denies (fail closed).
// It is safe for concurrent use.
type IntentStore struct {
	path string
	// file keeps the bytes last examined while a stat proves them current
	// (fsx.File): a call costs one stat, a read only after a change.
	file *fsx.File

	mu      sync.Mutex
	good    *IntentSet // last set that parsed, nil since the file went missing
	problem error      // why the file on disk is not in force, nil if it is
	have    bool       // sum holds the bytes last examined
	sum     [32]byte   // their sha256

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
	s := &IntentStore{path: path, file: fsx.NewFile(path, 0), done: make(chan struct{})}
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

// LastProblem is Problem as of the store's last look at the file, without
// looking again: for a front door reporting after a call, whose own check
// of the intents has just looked.
func (s *IntentStore) LastProblem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
// set, a file whose stamp shows it unchanged since it was last examined is
// not read (fsx.File says when a stamp proves that).
func (s *IntentStore) refreshLocked(force bool) {
	if force {
		s.file.Forget()
	}
	data, fresh, err := s.file.Read()
	if err != nil {
		s.lost()
		if errors.Is(err, fs.ErrNotExist) {
			s.problem = fmt.Errorf("intents file %s is missing: %w", s.path, err)
		} else {
			s.problem = fmt.Errorf("intents file %s: %w", s.path, err)
		}
		return
	}
	if !fresh {
		return
	}
	sum := sha256.Sum256(data)
	same := s.have && sum == s.sum
	s.have, s.sum = true, sum
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
	s.have, s.good = false, nil
	s.file.Forget()
}
