package orchestration

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
)

// FaultEnv names the environment variable the fault tests set in the child
// process they run: a comma-separated list of NAME or NAME=COUNT (the first
// COUNT times the point is reached; no count means every time). It exists so
// that the repository's tests can make a real binary meet an I/O error or a
// crash at an exact point; unset, as it always is in use, it costs one map
// lookup per point.
//
// Points: ledger-fsync (the ledger's fsync fails with EIO).
const FaultEnv = "INTENTGATE_TEST_FAULT"

var (
	faultOnce sync.Once
	faultMu   sync.Mutex
	faultLeft map[string]int // -1: always
)

// Fault reports whether the fault point name fires now, counting it down.
func Fault(name string) bool {
	faultOnce.Do(func() {
		faultLeft = map[string]int{}
		for _, p := range strings.Split(os.Getenv(FaultEnv), ",") {
			n, c, hasCount := strings.Cut(strings.TrimSpace(p), "=")
			if n == "" {
				continue
			}
			k := -1
			if hasCount {
				if v, err := strconv.Atoi(c); err == nil && v >= 0 {
					k = v
				}
			}
			faultLeft[n] = k
		}
	})
	if len(faultLeft) == 0 {
		return false
	}
	faultMu.Lock()
	defer faultMu.Unlock()
	k, ok := faultLeft[name]
	switch {
	case !ok || k == 0:
		return false
	case k > 0:
		faultLeft[name] = k - 1
	}
	return true
}

// errFaultIO is the error an injected I/O fault returns.
var errFaultIO = errors.New("input/output error (injected by " + FaultEnv + ")")

// ledgerSync is f.Sync with the ledger-fsync fault point.
func ledgerSync(f *os.File) error {
	if Fault("ledger-fsync") {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: errFaultIO}
	}
	ledgerObserve("fsync-begin", f, 0)
	if err := f.Sync(); err != nil {
		return err
	}
	ledgerObserve("fsync-end", f, 0)
	return nil
}

// ledgerObserver, set only by tests, sees the ledger's steps in the order
// they happen: "written" (a line's write returned; off is where it ends),
// "fsync-begin", "fsync-end" (an fsync returned without error), "covered"
// (a sync skipped because a mark covers through off) and "acked" (an
// append is about to return success for the line ending at off).
var ledgerObserver func(step string, f *os.File, off int64)

func ledgerObserve(step string, f *os.File, off int64) {
	if ledgerObserver != nil {
		ledgerObserver(step, f, off)
	}
}
