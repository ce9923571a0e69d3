package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// countSlots is how `trace stats` reads the ledger: every worker reads its
// own slots of the file (pread) and counts them, with no reader goroutine
// between the file and the workers. The copy from the page cache, a tenth
// of the work, is then spread over the cores like the rest, each slot is
// counted on the core that just copied it (still in that core's cache), and
// nothing crosses a channel.
//
// The bytes from..size are cut into slots of chunk bytes. A slot counts the
// lines that start in it (a line starts at from, or after a newline), the
// last of them read on past the slot's end to its newline. A line that
// reaches size without a newline is the torn tail (or an append in
// progress): never counted, as the pipeline does not count it. So every
// whole line is counted once, by the slot it starts in, whatever the
// workers' number and order: the sums merge as the pipeline's do.
//
// size is the file's size when it is opened: lines appended later are left
// for the next count. The file may only shrink by the repair of a torn tail;
// a read that finds it shorter than size (errSlotsShrank) sends the caller
// back to the pipeline, which reads whatever is there.
func countSlots(f *os.File, size, from int64, chunk int, ws []statWorker, progress func(read int64)) (end int64, err error) {
	if chunk <= 0 {
		chunk = statsChunkSize
	}
	slots := (size - from + int64(chunk) - 1) / int64(chunk)
	var (
		next    atomic.Int64
		failed  atomic.Bool
		mu      sync.Mutex // progress, firstErr
		read    int64
		firstEr error
		wg      sync.WaitGroup
	)
	ends := make([]int64, len(ws))
	for w := range ws {
		ends[w] = from
		wg.Add(1)
		go func() {
			defer wg.Done()
			sr := slotReader{f: f, size: size, from: from, chunk: int64(chunk)}
			for !failed.Load() {
				k := next.Add(1) - 1
				if k >= slots {
					return
				}
				// A worker never blocks, so the runtime would stop it
				// with a signal every 10 ms (asynchronous preemption); on
				// a loaded machine, where a thread waits for a processor
				// longer than that, those signals were a tenth of the
				// count's CPU. Yielding between slots tells the runtime
				// the worker is at a safe point, for a few hundred
				// nanoseconds a slot.
				runtime.Gosched()
				e, n, err := sr.count(k, &ws[w])
				if err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
				ends[w] = max(ends[w], e)
				if progress != nil {
					mu.Lock()
					read += n
					progress(read)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return 0, firstEr
	}
	end = from
	for _, e := range ends {
		end = max(end, e)
	}
	return end, nil
}

// errSlotsShrank: the ledger was shorter than its size when opened.
var errSlotsShrank = errors.New("ledger: shrank while counted")

// slotReader is one worker's reading of slots: its buffer is reused from
// slot to slot.
type slotReader struct {
	f                 *os.File
	size, from, chunk int64
	buf               []byte
}

// slotOverrun is how far past its slot a read goes at first, for the last
// line that starts in the slot (records are about 1 KB).
const slotOverrun = 16 << 10

// count counts the lines that start in slot k into w. It returns the offset
// just past the last whole line it counted (from when none) and the bytes
// of its slot.
func (r *slotReader) count(k int64, w *statWorker) (end int64, n int64, err error) {
	a := r.from + k*r.chunk
	b := min(a+r.chunk, r.size)
	// Read from the byte before the slot: whether a line starts at a.
	off := a
	if k > 0 {
		off = a - 1
	}
	want := min(b+slotOverrun, r.size) - off
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	buf, err := r.readAt(r.buf[:want], off)
	if err != nil {
		return 0, 0, err
	}
	// p: the first line start in the slot, as an index of buf.
	p := 0
	if k > 0 {
		i := bytes.IndexByte(buf[:b-off], '\n')
		if i < 0 || off+int64(i+1) >= b {
			return r.from, b - a, nil // no line starts in the slot
		}
		p = i + 1
	}
	// q: the start of the last line that starts in the slot; read on to
	// its newline.
	q := bytes.LastIndexByte(buf[p:b-off], '\n')
	if q < 0 {
		q = p
	} else {
		q += p + 1
	}
	if off+int64(q) < b { // the last line starts in the slot: find its end
		for {
			i := bytes.IndexByte(buf[q:], '\n')
			if i >= 0 {
				q += i + 1
				break
			}
			if off+int64(len(buf)) >= r.size { // the torn tail
				break
			}
			// A line longer than the overrun: read on, doubling.
			nb := make([]byte, min(2*int64(len(buf)), r.size-off))
			copy(nb, buf)
			if _, err := r.readAt(nb[len(buf):], off+int64(len(buf))); err != nil {
				return 0, 0, err
			}
			buf, r.buf = nb, nb
		}
	}
	if q == p {
		return r.from, b - a, nil
	}
	w.chunk(&lineChunk{off: off + int64(p), data: buf[p:q:q]})
	return off + int64(q), b - a, nil
}

// readAt fills b from offset off, or fails: errSlotsShrank when the file
// ends first.
func (r *slotReader) readAt(b []byte, off int64) ([]byte, error) {
	n, err := r.f.ReadAt(b, off)
	if n == len(b) {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil, errSlotsShrank
	}
	return nil, fmt.Errorf("ledger: read: %w", err)
}

// countWorkers is the workers of a count: one per processor the runtime
// uses.
func countWorkers() []statWorker {
	ws := make([]statWorker, runtime.GOMAXPROCS(0))
	for i := range ws {
		ws[i] = newStatWorker()
	}
	return ws
}
