package engine

import (
	"os"
	"sync"
)

// syncParallel fsyncs files at the same time, one goroutine each but the
// first, and returns each file's error in order. It is what StartSync
// falls back on where the kernel cannot be handed the fsyncs.
func syncParallel(files []*os.File) []error {
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = f.Sync()
		}()
	}
	if len(files) > 0 {
		errs[0] = files[0].Sync()
	}
	wg.Wait()
	return errs
}

// SyncFiles fsyncs files at the same time and returns each one's error, in
// order (nil for a file synced), once every fsync has ended. On a
// journaling file system the fsyncs then share a commit, one round of the
// disk, as if one fsync covered them all. See StartSync for how.
func SyncFiles(files ...*os.File) []error {
	switch len(files) {
	case 0:
		return nil
	case 1:
		return []error{files[0].Sync()}
	}
	// The others go to the kernel while this thread, running already,
	// syncs the first itself: one thread less to wake than handing over
	// all of them.
	s := StartSync(files[1:]...)
	first := files[0].Sync()
	return append([]error{first}, s.Wait()...)
}

// Syncing is a set of fsyncs under way, started by StartSync.
type Syncing struct {
	files []*os.File
	errs  []error
	aio   aioBatch      // the kernel's requests, where it takes them
	done  chan struct{} // closed by the goroutine that syncs, otherwise
}

// StartSync starts fsyncs of files and returns at once; Wait returns their
// errors. The caller may do its own fsync meanwhile (the ledger's), so
// that all of them share one round of the disk, and must not close files
// before Wait returns.
//
// On Linux the kernel runs the fsyncs (asynchronous I/O requests, waited
// for in one system call): the Go runtime then has no second thread
// blocked in a system call, so it neither hands the blocked thread's
// processor to another thread nor wakes one for it. Elsewhere, or when the
// kernel refuses, the fsyncs run on goroutines.
func StartSync(files ...*os.File) *Syncing {
	s := &Syncing{files: files, errs: make([]error, len(files))}
	if len(files) == 0 {
		return s
	}
	if s.aio.start(files, s.errs) {
		return s
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		copy(s.errs, syncParallel(files))
	}()
	return s
}

// Wait returns once every fsync StartSync started has ended, with each
// file's error in order (nil for a file synced). Call it once.
func (s *Syncing) Wait() []error {
	if s.done != nil {
		<-s.done
	} else {
		s.aio.wait(s.files, s.errs)
	}
	return s.errs
}
