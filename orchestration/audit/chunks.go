package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// The chunk pipeline reads the ledger in large chunks of whole lines and
// hands each chunk to one of several workers, which do the per-line work
// (hashing, reading, validating) for the whole chunk at once; a consumer
// then sees the chunks' results in file order. Unlike Scan, nothing per line
// crosses a channel, and the chunk buffers are reused: memory is bounded by
// the chunks in flight, whatever the ledger's length.

// lineChunk is a run of whole lines of the ledger.
type lineChunk struct {
	seq  int
	off  int64  // file offset of data[0]
	data []byte // whole lines, each with its newline
	// torn is, in the last chunk, the bytes after the last newline of the
	// file (a torn tail or an append in progress); nil otherwise.
	torn []byte
	buf  []byte // the backing buffer, returned to the pool when done
}

// eachLine calls fn with each whole line of c: its offset in data, its
// bytes with the newline, and without the newline and a carriage return.
func (c *lineChunk) eachLine(fn func(at int, full, raw []byte)) {
	d := c.data
	at := 0
	for at < len(d) {
		i := bytes.IndexByte(d[at:], '\n')
		full := d[at : at+i+1 : at+i+1]
		fn(at, full, trimCR(full[:i]))
		at += i + 1
	}
}

type chunkOptions struct {
	from, to  int64 // to 0: the end
	size      int   // bytes per chunk; 0 means chunkSize
	workers   int   // 0 means GOMAXPROCS
	keep      bool  // never reuse a chunk's buffer (the consumer keeps slices of it)
	progress  func(read int64)
	chunkSeen func(c *lineChunk) // called by the reader as each chunk is cut (tests)
}

const chunkSize = 4 << 20

// runChunks cuts the file at path into chunks and runs work on each (from
// several goroutines; worker says which, 0 to workers-1, so that a worker
// can keep state of its own), then consume with each chunk and its result
// in file order, on the calling goroutine. The first error of consume stops
// it and is returned. The chunk's bytes are valid until consume returns,
// unless o.keep.
func runChunks[T any](path string, o chunkOptions, work func(worker int, c *lineChunk) T, consume func(c *lineChunk, res T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if o.from > 0 {
		if _, err := f.Seek(o.from, io.SeekStart); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	if o.to > 0 {
		r = io.LimitReader(f, o.to-o.from)
	}
	return runChunksFrom(r, o, work, consume)
}

// runChunksFrom is runChunks reading r, which starts at byte o.from of the
// ledger (o.to is not applied: r ends where the reading should).
func runChunksFrom[T any](r io.Reader, o chunkOptions, work func(worker int, c *lineChunk) T, consume func(c *lineChunk, res T) error) error {
	workers := o.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := o.size
	if size <= 0 {
		size = chunkSize
	}
	type done struct {
		c   *lineChunk
		res T
	}
	// Buffers in flight: being read, worked on, or waiting for their turn.
	// The reader takes one for each chunk and blocks when none is free,
	// which bounds memory; the chunk the consumer waits for always holds
	// one, so the pipeline cannot stall.
	nbuf := 2*workers + 2
	free := make(chan []byte, nbuf)
	for range nbuf {
		free <- nil
	}
	in := make(chan *lineChunk, nbuf)
	out := make(chan done, nbuf)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(in)
		readErr = cutChunks(r, o, size, free, in, stop)
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range in {
				d := done{c: c, res: work(w, c)}
				select {
				case out <- d:
				case <-stop:
				}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()

	pending := map[int]done{}
	next := 0
	var consumeErr error
	for d := range out {
		if consumeErr != nil {
			continue
		}
		pending[d.c.seq] = d
		for {
			nd, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if err := consume(nd.c, nd.res); err != nil {
				consumeErr = err
				close(stop)
				break
			}
			if !o.keep {
				select {
				case free <- nd.c.buf:
				default:
				}
			}
		}
	}
	if consumeErr != nil {
		return consumeErr
	}
	if readErr != nil && !errors.Is(readErr, errScanStop) {
		return readErr
	}
	return nil
}

// cutChunks reads r and sends chunks of whole lines; what follows the last
// newline goes out in the last chunk as its torn tail.
func cutChunks(r io.Reader, o chunkOptions, size int, free chan []byte, in chan<- *lineChunk, stop <-chan struct{}) error {
	off := o.from
	seq := 0
	var carry []byte // the start of a line the last read cut
	var read int64
	for {
		var buf []byte
		if !o.keep {
			select {
			case buf = <-free:
			case <-stop:
				return errScanStop
			}
		}
		// A buffer from the pool is reused as it is (a new one for every
		// chunk would cost the kernel a fresh zeroed page per 4 KiB read):
		// the carry takes its start, the read the rest.
		need := max(size, len(carry)+size/2)
		if cap(buf) < need {
			buf = make([]byte, need)
		}
		buf = buf[:cap(buf)]
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):])
		read += int64(n)
		data := buf[:len(carry)+n]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return fmt.Errorf("ledger: read: %w", err)
		}
		if o.progress != nil {
			o.progress(read)
		}
		c := &lineChunk{seq: seq, off: off, buf: buf}
		last := bytes.LastIndexByte(data, '\n')
		switch {
		case eof:
			c.data = data[:last+1]
			if last+1 < len(data) {
				c.torn = data[last+1:]
			}
			carry = nil
		case last < 0:
			// No newline in a whole chunk: a line longer than a chunk.
			// Read on with a larger buffer.
			carry = append([]byte(nil), data...)
			size *= 2
			select {
			case free <- buf:
			default:
			}
			continue
		default:
			c.data = data[:last+1]
			// The carry is copied out: the buffer goes back to the pool
			// while the next read fills another.
			carry = append(carry[:0:0], data[last+1:]...)
		}
		off += int64(len(c.data))
		if o.chunkSeen != nil {
			o.chunkSeen(c)
		}
		select {
		case in <- c:
			seq++
		case <-stop:
			return errScanStop
		}
		if eof {
			return nil
		}
	}
}
