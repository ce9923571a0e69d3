package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/intentgate/intentgate/orchestration"
)

// Line is one ledger line as Scan delivers it.
type Line struct {
	No  int   // 1-based
	Off int64 // offset of its first byte
	// Full is the line's bytes with its newline; Raw without the newline and
	// a carriage return before it, the bytes the chain link hashes.
	Full, Raw []byte
	Sum       [32]byte // SHA-256 of Raw
	Complete  bool     // false only for a torn last line
	Rec       *orchestration.Record
	ParseErr  error // from ParseRecord
	SchemaErr error // from ValidateLine, when asked for
	Seed      bool  // the line is in the seed shape
}

// ScanOptions says how much work Scan does per line.
type ScanOptions struct {
	Parse  bool // run ParseRecord
	Schema bool // validate against Agent Trace 0.1.0 (implies Parse)
	// From starts at a byte offset that begins a line, numbered FirstLine-1
	// lines in (FirstLine 0 means 1). To stops before an offset (0: the end).
	From      int64
	FirstLine int
	To        int64
	// Progress, if set, is called now and then from the reading goroutine
	// with the bytes read so far (counted from From).
	Progress func(read int64)
	Workers  int  // 0 means GOMAXPROCS
	NoSum    bool // leave Line.Sum zero (for readers that do not check the chain)
}

type scanBatch struct {
	seq   int
	lines []Line
}

const scanChunk = 1 << 20

var errScanStop = errors.New("scan stopped")

// Scan reads the ledger at path and calls fn with every line in order; the
// hashing, parsing and validation run on several goroutines. The slices of a
// Line stay valid after fn returns. The first error fn returns stops the scan
// and is returned.
func Scan(path string, o ScanOptions, fn func(*Line) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if o.From > 0 {
		if _, err := f.Seek(o.From, io.SeekStart); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	if o.To > 0 {
		r = io.LimitReader(f, o.To-o.From)
	}
	return scanReader(r, o, fn)
}

func scanReader(r io.Reader, o ScanOptions, fn func(*Line) error) error {
	if o.Schema {
		o.Parse = true
		if _, err := compiledSchema(); err != nil {
			return err
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	in := make(chan *scanBatch, workers*2)
	out := make(chan *scanBatch, workers*2)
	stop := make(chan struct{})
	var readErr error
	go func() { // reader: cut the input into batches of whole lines
		defer close(in)
		readErr = scanSplit(r, o, in, stop)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range in {
				for i := range b.lines {
					scanWork(&b.lines[i], o)
				}
				select {
				case out <- b:
				case <-stop:
				}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()

	pending := map[int]*scanBatch{}
	next := 0
	var fnErr error
	for b := range out {
		if fnErr != nil {
			continue
		}
		pending[b.seq] = b
		for {
			nb, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for i := range nb.lines {
				if err := fn(&nb.lines[i]); err != nil {
					fnErr = err
					close(stop)
					break
				}
			}
			if fnErr != nil {
				break
			}
		}
	}
	if fnErr != nil {
		return fnErr
	}
	if readErr != nil && !errors.Is(readErr, errScanStop) {
		return readErr
	}
	return nil
}

// scanSplit reads r in large chunks and sends batches of complete lines; the
// bytes after the last newline go out last as a torn line.
func scanSplit(r io.Reader, o ScanOptions, in chan<- *scanBatch, stop <-chan struct{}) error {
	off := o.From
	no := max(o.FirstLine, 1) - 1
	seq := 0
	var carry []byte
	var read int64
	send := func(lines []Line) bool {
		select {
		case in <- &scanBatch{seq: seq, lines: lines}:
			seq++
			return true
		case <-stop:
			return false
		}
	}
	for {
		buf := make([]byte, len(carry)+scanChunk)
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):])
		read += int64(n)
		buf = buf[:len(carry)+n]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return fmt.Errorf("ledger: read: %w", err)
		}
		if o.Progress != nil {
			o.Progress(read)
		}
		last := bytes.LastIndexByte(buf, '\n')
		var lines []Line
		if last >= 0 {
			lines = make([]Line, 0, bytes.Count(buf[:last+1], []byte{'\n'}))
			rest := buf[:last+1]
			for len(rest) > 0 {
				i := bytes.IndexByte(rest, '\n')
				full := rest[:i+1]
				no++
				lines = append(lines, Line{No: no, Off: off, Full: full, Raw: trimCR(full[:i]), Complete: true})
				off += int64(len(full))
				rest = rest[i+1:]
			}
			carry = buf[last+1:]
		} else {
			carry = buf
		}
		if eof && len(carry) > 0 {
			no++
			lines = append(lines, Line{No: no, Off: off, Full: carry, Raw: carry})
			carry = nil
		}
		if len(lines) > 0 && !send(lines) {
			return errScanStop
		}
		if eof {
			return nil
		}
	}
}

func scanWork(l *Line, o ScanOptions) {
	if !o.NoSum {
		l.Sum = sha256.Sum256(l.Raw)
	}
	if !l.Complete || !o.Parse {
		return
	}
	// The writer's own lines are read without encoding/json, and being the
	// writer's bytes exactly they need only the value checks to be valid.
	if rec, ok := orchestration.ParseCanonical(l.Raw); ok {
		l.Rec = rec
		if o.Schema && !ownRecordValues(rec) {
			l.Seed, l.SchemaErr = ValidateLine(l.Raw, l.Rec)
		}
		return
	}
	l.Rec, l.ParseErr = orchestration.ParseRecord(l.Raw)
	if l.ParseErr == nil && o.Schema && !ownRecordValid(l.Raw, l.Rec) {
		l.Seed, l.SchemaErr = ValidateLine(l.Raw, l.Rec)
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
