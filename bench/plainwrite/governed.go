package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// governed does the disk work of intentgate's crash protocol around a plain
// durable write, and nothing else: the syncs a governed write waits for.
type governed struct {
	journal *os.File // nil for -protocol ledger
	ledger  *os.File
	record  []byte // a journal record's size
	line    []byte // a ledger line's size
}

func newGoverned(dir string, journal bool) (*governed, error) {
	side := filepath.Join(dir, ".governed")
	if err := os.MkdirAll(side, 0o755); err != nil {
		return nil, err
	}
	g := &governed{record: []byte(strings.Repeat("j", 380)), line: []byte(strings.Repeat("l", 814) + "\n")}
	var err error
	if journal {
		if g.journal, err = os.OpenFile(filepath.Join(side, "journal.slot"), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return nil, err
		}
	}
	if g.ledger, err = os.OpenFile(filepath.Join(side, "ledger.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o644); err != nil {
		return nil, err
	}
	return g, nil
}

// inParallel runs a, and b at the same time when it is not nil, and
// returns the first error.
func inParallel(a, b func() error) error {
	if b == nil {
		return a()
	}
	done := make(chan error, 1)
	go func() { done <- a() }()
	errB := b()
	if errA := <-done; errA != nil {
		return errA
	}
	return errB
}

func (g *governed) write(path string, data []byte) error {
	var journal func() error
	if g.journal != nil {
		// The journal record, durable before the rename, while the
		// content's own fsync runs.
		journal = func() error {
			if _, err := g.journal.WriteAt(g.record, 0); err != nil {
				return err
			}
			return fdatasync(g.journal)
		}
	}
	// The ledger line, durable before the answer, while the directory's
	// fsync runs.
	ledger := func() error {
		if _, err := g.ledger.Write(g.line); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		return g.ledger.Sync()
	}
	return durableWriteWith(path, data, journal, ledger)
}
