package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

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

// scanReader is Scan of the ledger bytes r delivers: the chunk pipeline of
// chunks.go, with chunks that are never reused (the lines handed to fn stay
// valid), a Line made for every line by the workers, and numbered and
// handed to fn in order by the caller's goroutine.
func scanReader(r io.Reader, o ScanOptions, fn func(*Line) error) error {
	if o.Schema {
		o.Parse = true
		if _, err := compiledSchema(); err != nil {
			return err
		}
	}
	no := max(o.FirstLine, 1) - 1
	co := chunkOptions{from: o.From, size: scanChunk, workers: o.Workers, keep: true, progress: o.Progress}
	return runChunksFrom(r, co,
		func(_ int, c *lineChunk) []Line {
			lines := make([]Line, 0, bytes.Count(c.data, []byte{'\n'}))
			c.eachLine(func(at int, full, raw []byte) {
				lines = append(lines, Line{Off: c.off + int64(at), Full: full, Raw: raw, Complete: true})
				scanWork(&lines[len(lines)-1], o)
			})
			return lines
		},
		func(c *lineChunk, lines []Line) error {
			for i := range lines {
				no++
				lines[i].No = no
				if err := fn(&lines[i]); err != nil {
					return err
				}
			}
			if len(c.torn) > 0 {
				// A torn last line: delivered as it is, never parsed.
				no++
				l := &Line{No: no, Off: c.off + int64(len(c.data)), Full: c.torn, Raw: c.torn}
				scanWork(l, o)
				return fn(l)
			}
			return nil
		})
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
