package orchestration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// intentMapBenchRecord is record n of a ledger that touches 5 intents × 40
// files over and over, so the map's size does not grow with the ledger.
func intentMapBenchRecord(b *testing.B, n int) *Record {
	rec, err := NewRecord(RecordInput{
		Time:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second),
		Model: "anthropic/claude-opus-4-5",
		Path:  "src/pkg" + strconv.Itoa(n%40) + "/file.go",
		Ranges: []Range{
			{StartLine: n%100 + 1, EndLine: n%100 + 9, ContentHash: HashLines(strconv.Itoa(n))},
			{StartLine: 200, EndLine: 200, ContentHash: HashLines("x")},
		},
		Meta: Meta{Intent: "INT-00" + strconv.Itoa(n%5), Session: "s", CallID: strconv.Itoa(n), Tool: "apply_diff", Mutation: MutationModify},
	})
	if err != nil {
		b.Fatal(err)
	}
	return rec
}

var intentMapBenchCache sync.Map // records -> *intentMapBenchFiles

type intentMapBenchFiles struct {
	once                 sync.Once
	ledger, summary, md  []byte
	err                  error
	intents              []Intent
	ledgerBytes, records int
}

// intentMapBenchSetup builds, once per size, a ledger of n records and its
// intent map, and copies them into a fresh .orchestration directory.
func intentMapBenchSetup(b *testing.B, n int) (orchDir string, intents []Intent) {
	v, _ := intentMapBenchCache.LoadOrStore(n, &intentMapBenchFiles{})
	files := v.(*intentMapBenchFiles)
	files.once.Do(func() {
		for i := range 5 {
			files.intents = append(files.intents, Intent{ID: "INT-00" + strconv.Itoa(i), Name: "intent " + strconv.Itoa(i),
				Status: StatusInProgress, OwnedScope: []string{"src/**"}})
		}
		dir := filepath.Join(b.TempDir(), ".orchestration")
		os.MkdirAll(dir, 0o755)
		// Chained by hand: n fsynced appends would take minutes.
		var buf []byte
		prev := ""
		for i := range n {
			rec := intentMapBenchRecord(b, i)
			rec.Meta.Prev = prev
			line, err := MarshalShape(rec, ShapeAgentTrace)
			if err != nil {
				files.err = err
				return
			}
			prev = ledgerLineHash(line)
			buf = append(append(buf, line...), '\n')
		}
		if files.err = os.WriteFile(filepath.Join(dir, LedgerName), buf, 0o644); files.err != nil {
			return
		}
		if files.err = RebuildIntentMap(dir, files.intents, filepath.Join(dir, LedgerName)); files.err != nil {
			return
		}
		files.ledger = buf
		files.summary, files.err = os.ReadFile(filepath.Join(dir, IntentMapSummaryName))
		if files.err == nil {
			files.md, files.err = os.ReadFile(filepath.Join(dir, IntentMapName))
		}
	})
	if files.err != nil {
		b.Fatal(files.err)
	}
	orchDir = filepath.Join(b.TempDir(), ".orchestration")
	os.MkdirAll(orchDir, 0o755)
	for name, data := range map[string][]byte{LedgerName: files.ledger, IntentMapSummaryName: files.summary, IntentMapName: files.md} {
		if err := os.WriteFile(filepath.Join(orchDir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return orchDir, files.intents
}

// BenchmarkUpdateIntentMap measures one UpdateIntentMap after one append
// (the append itself untimed), with a ledger of 1,000 and of 100,000 records:
// the cost must not grow with the ledger.
func BenchmarkUpdateIntentMap(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			orchDir, intents := intentMapBenchSetup(b, n)
			l, err := OpenLedger(filepath.Join(orchDir, LedgerName))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				rec := intentMapBenchRecord(b, n+i)
				line, err := l.AppendLine(rec)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := UpdateIntentMap(orchDir, intents, rec, line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLedgerAppend measures one durable append: lock, tail read, one
// write, fsync.
func BenchmarkLedgerAppend(b *testing.B) {
	l, err := OpenLedger(filepath.Join(b.TempDir(), ".orchestration", LedgerName))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	recs := make([]*Record, b.N)
	for i := range recs {
		recs[i] = intentMapBenchRecord(b, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := l.Append(recs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIntentMapRatio alternates one update after one append on a
// ledger of 1,000 records and on one of 1,000,000 (100,000 with -short),
// and reports the median time of each and their ratio: the cost of keeping
// intent_map.md current must not depend on the ledger's length (goal: at
// most 1.2).
func BenchmarkIntentMapRatio(b *testing.B) {
	big := 1000000
	if testing.Short() {
		big = 100000
	}
	type side struct {
		orchDir string
		intents []Intent
		l       *Ledger
		n       int
		times   []time.Duration
	}
	open := func(n int) *side {
		orchDir, intents := intentMapBenchSetup(b, n)
		l, err := OpenLedger(filepath.Join(orchDir, LedgerName))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		return &side{orchDir: orchDir, intents: intents, l: l, n: n}
	}
	small, large := open(1000), open(big)
	step := func(s *side) {
		rec := intentMapBenchRecord(b, s.n)
		s.n++
		line, err := s.l.AppendLine(rec)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := UpdateIntentMap(s.orchDir, s.intents, rec, line); err != nil {
			b.Fatal(err)
		}
		s.times = append(s.times, time.Since(t0))
	}
	// The first update of each loads the summary from disk; the ones after
	// it are the steady state of a long-running process.
	step(small)
	step(large)
	small.times, large.times = nil, nil
	for b.Loop() {
		step(small)
		step(large)
	}
	ms, ml := medianDuration(small.times), medianDuration(large.times)
	b.ReportMetric(float64(ms.Microseconds()), "us/update-1k")
	b.ReportMetric(float64(ml.Microseconds()), "us/update-big")
	b.ReportMetric(float64(ml)/float64(ms), "ratio")
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
