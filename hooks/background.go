package hooks

import (
	"sync"

	"github.com/intentgate/intentgate/orchestration"
)

// Background runs a content recorder whose work only fills a cache (the
// blame snapshots: line fingerprints of each version, which blame can do
// without) on a goroutine of its own, in order, off the path of the call:
// a long-lived front door (dispatch, mcp) answers the call while the
// snapshot is written, and the work overlaps the next call's waits for the
// disk. At most depth changes wait (their content is held until then); a
// caller past that waits for room. Close runs what is queued and waits for
// it; after Close every change is recorded at once, in the caller.
type Background struct {
	r    ContentRecorder
	mu   sync.Mutex
	shut bool
	jobs chan backgroundJob
	done chan struct{}
}

type backgroundJob struct {
	rec         *orchestration.Record
	line, after []byte
}

var _ ContentRecorder = (*Background)(nil)

// NewBackground starts the goroutine that runs r.
func NewBackground(r ContentRecorder, depth int) *Background {
	b := &Background{r: r, jobs: make(chan backgroundJob, max(depth, 1)), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		for j := range b.jobs {
			b.r.RecordedContent(j.rec, j.line, j.after)
		}
	}()
	return b
}

// Recorded is r's, run at once: it reads the workspace, which may change.
func (b *Background) Recorded(rec *orchestration.Record, line []byte) error {
	return b.r.Recorded(rec, line)
}

// RecordedContent queues the change for the goroutine. Its error, a cache
// not filled, is not the call's: it returns nil.
func (b *Background) RecordedContent(rec *orchestration.Record, line, after []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return b.r.RecordedContent(rec, line, after)
	}
	b.jobs <- backgroundJob{rec: rec, line: line, after: after}
	return nil
}

// Close waits for the queued changes to be recorded and stops the
// goroutine. It is safe to call more than once.
func (b *Background) Close() {
	b.mu.Lock()
	if !b.shut {
		b.shut = true
		close(b.jobs)
	}
	b.mu.Unlock()
	<-b.done
}
