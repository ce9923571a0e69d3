package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// slotsLedger writes a ledger of intentgate's records mixed with other
// writers' lines, damaged lines (one a record cut in half in the middle of
// the ledger), an empty line, CRLF endings, a line longer than most slots
// and a torn tail, and returns its path and bytes.
func slotsLedger(t *testing.T, r *rand.Rand) (string, []byte) {
	t.Helper()
	_, ledger := testWorkspace(t, 150)
	lines := readLines(t, ledger)
	for _, e := range statsExtraLines(t) {
		at := r.IntN(len(lines) + 1)
		lines = append(lines[:at], append([][]byte{e}, lines[at:]...)...)
	}
	mid := len(lines) / 2
	bad := append(append([]byte(nil), lines[mid][:len(lines[mid])/2]...), '\n') // a bad record
	crlf := append(bytes.TrimSuffix(bytes.Clone(lines[mid+1]), []byte{'\n'}), '\r', '\n')
	long := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("y"), 9000)...), '"', '}', '\n')
	lines = append(lines[:mid], append([][]byte{bad, crlf, []byte("\n"), long}, lines[mid+2:]...)...)
	torn := lines[len(lines)-1][:len(lines[len(lines)-1])/3] // a torn tail
	data := append(bytes.Join(lines, nil), torn...)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestCountSlotsMatchesPipeline holds the slot count (each worker reading
// its own slots) to the chunk pipeline and to the plain count, line by
// line through ParseRecord: on one and two processors, with slots from one
// byte (every line split across slots) to larger than the ledger, and
// counts that start after a prefix (as from the kept count).
func TestCountSlotsMatchesPipeline(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	path, data := slotsLedger(t, r)
	lastNL := int64(bytes.LastIndexByte(data, '\n') + 1)
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		for _, chunk := range []int{1, 2, 7, 64, 700, 1000, 4096, 9001, 0, len(data) + 5} {
			for _, from := range []int64{0, -1} {
				if from < 0 { // a line start half way
					from = int64(bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1)
				}
				slots, pipe := newStatState(), newStatState()
				endS, nS, err := slots.count(path, from, chunk, nil)
				if err != nil {
					t.Fatalf("procs %d, chunk %d: %v", procs, chunk, err)
				}
				ws := countWorkers()
				endP, err := countPipeline(path, from, chunk, ws, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range ws {
					pipe.addWorker(&ws[i])
				}
				if endS != endP || endS != lastNL || nS != pipe.lines {
					t.Fatalf("procs %d, chunk %d, from %d: slots end at %d after %d lines, pipeline at %d after %d (last newline %d)",
						procs, chunk, from, endS, nS, endP, pipe.lines, lastNL)
				}
				got, want := slots.stats(), pipe.stats()
				if !reflect.DeepEqual(got, want) {
					g, _ := json.MarshalIndent(got, "", " ")
					w, _ := json.MarshalIndent(want, "", " ")
					t.Fatalf("procs %d, chunk %d, from %d: stats differ:\n slots %s\npipeline %s", procs, chunk, from, g, w)
				}
				if from == 0 {
					if plain := statsByEntries(t, path); !reflect.DeepEqual(got, plain) {
						t.Fatalf("procs %d, chunk %d: slots count differs from the plain count", procs, chunk)
					}
					if got.Unparsable < 4 || got.Records < 150 {
						t.Fatalf("the ledger does not exercise the count: %d records, %d unparsable", got.Records, got.Unparsable)
					}
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestCountSlotsShrunkLedger: a ledger shorter than the size it was opened
// with (its torn tail repaired meanwhile) is refused by the slot count, and
// count then reads it through the pipeline: the same result as a count of
// the file as it is.
func TestCountSlotsShrunkLedger(t *testing.T) {
	path, data := slotsLedger(t, rand.New(rand.NewPCG(9, 10)))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{64, 4096, 0} {
		ws := countWorkers()
		if _, err := countSlots(f, int64(len(data))+100, 0, chunk, ws, nil); !errors.Is(err, errSlotsShrank) {
			t.Fatalf("chunk %d: countSlots of a shrunk file = %v, want errSlotsShrank", chunk, err)
		}
	}
	s := newStatState()
	end, _, err := s.countSized(path, f, int64(len(data))+100, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.stats(), statsByEntries(t, path); !reflect.DeepEqual(got, want) || end != int64(bytes.LastIndexByte(data, '\n')+1) {
		t.Fatalf("count after the slots refused ends at %d, and differs from the plain count: %v", end, !reflect.DeepEqual(got, want))
	}
}

// TestCountSlotsProgress: the progress a slot count reports grows to the
// bytes it was asked to read.
func TestCountSlotsProgress(t *testing.T) {
	path, data := slotsLedger(t, rand.New(rand.NewPCG(11, 12)))
	var last int64
	calls := 0
	s := newStatState()
	if _, _, err := s.count(path, 0, 1000, func(read int64) {
		if read < last {
			t.Errorf("progress went back from %d to %d", last, read)
		}
		last = read
		calls++
	}); err != nil {
		t.Fatal(err)
	}
	if last != int64(len(data)) || calls < len(data)/1000 {
		t.Fatalf("progress ended at %d after %d calls, want %d", last, calls, len(data))
	}
}
