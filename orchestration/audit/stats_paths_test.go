package audit

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPathTableNumbersLikeAMap: the table gives each path the number a
// map of first sightings gives it, through several doublings of its slots,
// for paths that share long prefixes, differ in one byte or in length
// only, and the empty path.
func TestPathTableNumbersLikeAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var paths []string
	for i := range 6000 {
		paths = append(paths, fmt.Sprintf("src/pkg%d/file_%d.go", i%97, i))
	}
	long := strings.Repeat("d/", 300)
	paths = append(paths, "", "a", "a\x00", "\xff", long+"x", long+"y", long+"xy")
	tab := newPathTable()
	want := map[string]int32{}
	for range 50000 {
		p := paths[r.IntN(len(paths))]
		n, ok := want[p]
		if !ok {
			n = int32(len(want))
			want[p] = n
		}
		if got := tab.number([]byte(p)); got != n {
			t.Fatalf("path %q: number %d, want %d", p, got, n)
		}
	}
	if len(tab.names) != len(want) {
		t.Fatalf("%d names, want %d", len(tab.names), len(want))
	}
	for p, n := range want {
		if tab.names[n] != p {
			t.Fatalf("name %d is %q, want %q", n, tab.names[n], p)
		}
	}
	if 2*len(tab.names) > len(tab.slots) {
		t.Fatalf("%d paths in %d slots: more than half used", len(tab.names), len(tab.slots))
	}
}

// TestStatsWorkerAllocatesNothing: once a worker has seen a ledger's rows,
// paths and codes, counting intentgate's lines again allocates nothing
// (a denial's code counted by m[string(code)]++ made a string each time:
// a quarter of an allocation a line on a generated 1M-record ledger).
func TestStatsWorkerAllocatesNothing(t *testing.T) {
	_, ledger := testWorkspace(t, 60)
	var data []byte
	denials := 0
	for _, l := range readLines(t, ledger) {
		data = append(data, l...)
		if strings.Contains(string(l), `"denial":`) {
			denials++
		}
	}
	if denials == 0 {
		t.Fatal("no refusal in the ledger: the test would not count a code")
	}
	w := newStatWorker()
	c := &lineChunk{data: data}
	w.chunk(c)
	if w.records != 60 || w.unpars != 0 {
		t.Fatalf("%d records, %d unparsable; want 60, 0", w.records, w.unpars)
	}
	if n := testing.AllocsPerRun(20, func() { w.chunk(c) }); n != 0 {
		t.Fatalf("%v allocations a chunk of 60 lines, want 0", n)
	}
}
