package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// TestScanMatchesLines holds Scan (the chunk pipeline, lines kept) to the
// plain split of the file: every line in order with its number, offset,
// bytes, hash and record, a torn tail delivered unparsed, CRLF endings, a
// line longer than a chunk, a start and an end inside the file, and the
// lines still valid after the scan.
func TestScanMatchesLines(t *testing.T) {
	_, ledger := testWorkspace(t, 40)
	lines := readLines(t, ledger)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 12 {
		mut := mutateLedger(t, r, lines)
		mut = append(mut, []byte("\n"), []byte("{\"crlf\":1}\r\n"))
		if round%4 == 1 {
			long := append(bytes.Repeat([]byte("x"), scanChunk+scanChunk/3), '\n')
			at := r.IntN(len(mut))
			mut = append(mut[:at], append([][]byte{long}, mut[at:]...)...)
		}
		data := bytes.Join(mut, nil)
		if round%2 == 0 {
			data = append(data, `{"torn":`...)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Where to start and stop: the whole file, or from a line on and
		// up to a line.
		from, to, first := int64(0), int64(0), 0
		if round%3 == 2 {
			a, b := r.IntN(len(mut)/2), len(mut)/2+r.IntN(len(mut)/2)
			from, to, first = int64(len(bytes.Join(mut[:a], nil))), int64(len(bytes.Join(mut[:b], nil))), a+1
		}
		var want []Line
		off, no := from, max(first, 1)-1
		end := int64(len(data))
		if to > 0 {
			end = to
		}
		for _, full := range bytes.SplitAfter(data[from:end], []byte{'\n'}) {
			if len(full) == 0 {
				continue
			}
			no++
			l := Line{No: no, Off: off, Full: full, Complete: full[len(full)-1] == '\n'}
			l.Raw = full
			if l.Complete {
				l.Raw = trimCR(full[:len(full)-1])
				l.Rec, l.ParseErr = orchestration.ParseRecord(l.Raw)
			}
			l.Sum = sha256.Sum256(l.Raw)
			want = append(want, l)
			off += int64(len(full))
		}
		var got []*Line
		err := Scan(path, ScanOptions{Parse: true, From: from, To: to, FirstLine: first, Workers: 1 + round%3}, func(l *Line) error {
			got = append(got, l)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d lines, want %d", round, len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if g.No != w.No || g.Off != w.Off || !bytes.Equal(g.Full, w.Full) || !bytes.Equal(g.Raw, w.Raw) || g.Sum != w.Sum || g.Complete != w.Complete {
				t.Fatalf("round %d, line %d: got %d@%d %q complete=%v, want %d@%d %q complete=%v", round, i, g.No, g.Off, g.Full, g.Complete, w.No, w.Off, w.Full, w.Complete)
			}
			if (g.ParseErr == nil) != (w.ParseErr == nil) || !reflect.DeepEqual(g.Rec, w.Rec) {
				t.Fatalf("round %d, line %d: record %v (%v), want %v (%v)", round, g.No, g.Rec, g.ParseErr, w.Rec, w.ParseErr)
			}
		}
	}
}

// TestScanStopsAtFirstError: the first error of fn ends the scan and is
// what Scan returns.
func TestScanStopsAtFirstError(t *testing.T) {
	_, ledger := testWorkspace(t, 30)
	stop := errors.New("enough")
	n := 0
	err := Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
		n++
		if l.No == 7 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 7 {
		t.Fatalf("Scan = %v after %d lines, want %v after 7", err, n, stop)
	}
}
