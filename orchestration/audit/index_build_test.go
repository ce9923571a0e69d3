package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// refSegment is what a segment holds of the ledger's lines, built the plain
// way: one line at a time, every line through ParseRecord.
type refSegment struct {
	lines, ids, ranges []byte
	post               map[string][]uint32
	last               []byte
	n                  int
}

func refCollect(t testing.TB, path string) *refSegment {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &refSegment{post: map[string][]uint32{}}
	off := int64(0)
	for _, full := range bytes.SplitAfter(data, []byte{'\n'}) {
		if len(full) == 0 || full[len(full)-1] != '\n' {
			break
		}
		raw := trimCR(full[:len(full)-1])
		rel := uint32(s.n)
		var flags uint32
		var ts int64
		if rec, err := orchestration.ParseRecord(raw); err == nil {
			flags |= flagParsed
			ts = rec.Timestamp.UnixNano()
			if id, err := uuid.Parse(rec.ID); err == nil {
				s.ids = append(s.ids, id[:]...)
				s.ids = binary.LittleEndian.AppendUint32(s.ids, rel)
			}
			keys := map[string]bool{}
			change := isChange(rec)
			if intent := rec.Intent(); intent != "" {
				keys[keyIntent+intent] = true
			}
			if m := rec.Meta; m != nil {
				if m.Session != "" {
					keys[keySession+m.Session] = true
				}
				if m.Tool != "" {
					keys[keyTool+m.Tool] = true
				}
				switch {
				case m.Decision == orchestration.DecisionDeny || m.Mutation == orchestration.MutationDenial:
					flags |= flagDenial
					keys[keyDenial] = true
					if code := denialCode(m.Denial); code != "" {
						keys[keyDenial+code] = true
					}
				case m.Decision == orchestration.DecisionViolation || m.Mutation == orchestration.MutationViolation:
					flags |= flagViolate
					keys[keyViolate] = true
				}
			}
			if change {
				flags |= flagChange
				keys[keyChange] = true
			}
			for _, f := range rec.Files {
				keys[keyPath+f.Path] = true
				for _, c := range f.Conversations {
					if c.Contributor != nil && c.Contributor.ModelID != "" {
						keys[keyModel+c.Contributor.ModelID] = true
					}
					if !change {
						continue
					}
					for _, r := range c.Ranges {
						if h8, ok := hashPrefix(r.ContentHash); ok {
							s.ranges = binary.LittleEndian.AppendUint64(s.ranges, h8)
							s.ranges = binary.LittleEndian.AppendUint32(s.ranges, rel)
							s.ranges = binary.LittleEndian.AppendUint32(s.ranges, uint32(r.EndLine-r.StartLine+1))
						}
					}
				}
			}
			for k := range keys {
				s.post[k] = append(s.post[k], rel)
			}
		}
		s.lines = binary.LittleEndian.AppendUint64(s.lines, uint64(off))
		s.lines = binary.LittleEndian.AppendUint32(s.lines, uint32(len(full)))
		s.lines = binary.LittleEndian.AppendUint32(s.lines, flags)
		s.lines = binary.LittleEndian.AppendUint64(s.lines, uint64(ts))
		off += int64(len(full))
		s.n++
		s.last = raw
	}
	return s
}

// sortedEntries sorts fixed-size entries by all their bytes, for comparing
// sections whose order among equal keys is free.
func sortedEntries(b []byte, size int) [][]byte {
	var out [][]byte
	for i := 0; i+size <= len(b); i += size {
		out = append(out, b[i:i+size])
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	return out
}

// TestIndexCollectMatchesRecords holds the index build (the writer's lines
// read in place, chunks on several workers) to the plain build from
// ParseRecord, on damaged ledgers with other writers' lines and refusals of
// every denial shape.
func TestIndexCollectMatchesRecords(t *testing.T) {
	_, ledger := testWorkspace(t, 60)
	lines := readLines(t, ledger)
	var extra [][]byte
	for i, d := range []string{`{"error":"STALE_FILE","message":"m"}`, `{"error":"X","message":7}`, `{"Error":"A","error":"B"}`, `{"error":5}`, `{}`} {
		rec := testRecord(t, 4)
		rec.Meta.Denial = json.RawMessage(d)
		rec.Meta.Session = []string{"s1", "s9"}[i%2]
		b, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, append(b, '\n'))
	}
	extra = append(extra,
		[]byte(`{"version":"0.1.0","id":"0190a3c4-0000-7000-8000-000000000002","timestamp":"2026-01-01T00:00:00.5Z","files":[{"path":"a.go","conversations":[{"contributor":{"type":"ai","model_id":"m/x"},"ranges":[{"start_line":1,"end_line":4,"content_hash":"sha256:00112233445566778899"}],"related":[{"type":"intent","url":"intent:INT-9%2F1"}]}]}]}`+"\n"),
		[]byte(`{"version":"0.1.0","id":"0190a3c4-0000-7000-8000-000000000003","timestamp":"2026-01-01T00:00:00Z","files":[{"path":"b.go","conversations":[{"ranges":[{"start_line":2,"end_line":2}]}]},{"path":"b.go","conversations":[]}]}`+"\n"))
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 30 {
		mut := mutateLedger(t, r, lines)
		for _, e := range extra {
			at := r.IntN(len(mut) + 1)
			mut = append(mut[:at], append([][]byte{e}, mut[at:]...)...)
		}
		if err := os.WriteFile(path, bytes.Join(mut, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		want := refCollect(t, path)
		ix := &Index{dir: filepath.Join(dir, "ix"), ledger: path, chunkSize: []int{100, 1000, 0}[round%3]}
		if err := os.MkdirAll(ix.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ref, link, err := ix.build(1, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := readSegment(t, filepath.Join(ix.dir, ref.Name), *ref)
		switch {
		case ref.Lines != want.n || link != orchestration.LineLink(want.last) || ref.FirstOff != 0 || ref.Bytes != int64(len(bytes.Join(mut, nil))):
			t.Fatalf("round %d: %+v, last %s; want %d lines, last %q", round, ref, link, want.n, want.last)
		case !bytes.Equal(got.lines, want.lines):
			t.Fatalf("round %d: line tables differ", round)
		case !reflect.DeepEqual(got.post, want.post):
			t.Fatalf("round %d: postings differ:\n got %v\nwant %v", round, got.post, want.post)
		case !reflect.DeepEqual(sortedEntries(got.ids, idEntry), sortedEntries(want.ids, idEntry)):
			t.Fatalf("round %d: ids differ", round)
		case !reflect.DeepEqual(sortedEntries(got.ranges, rangeEntry), sortedEntries(want.ranges, rangeEntry)):
			t.Fatalf("round %d: ranges differ", round)
		}
		os.Remove(filepath.Join(ix.dir, ref.Name))
	}
}

// readSegment reads every section of a segment file back, through
// openSegment, and checks the order lookups rely on: ids ascending, ranges
// by hash prefix, line and length, keys by name.
func readSegment(t testing.TB, path string, ref segmentRef) *refSegment {
	t.Helper()
	s, err := openSegment(path, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer s.f.Close()
	out := &refSegment{post: map[string][]uint32{}, n: s.n}
	read := func(off int64, n int) []byte {
		b := make([]byte, n)
		if _, err := s.f.ReadAt(b, off); err != nil && n > 0 {
			t.Fatal(err)
		}
		return b
	}
	out.lines = read(s.offLines, s.n*lineEntry)
	out.ids = read(s.offIDs, s.nIDs*idEntry)
	out.ranges = read(s.offRanges, s.nRanges*rangeEntry)
	for i := 1; i < s.nIDs; i++ {
		a, b := out.ids[(i-1)*idEntry:i*idEntry], out.ids[i*idEntry:(i+1)*idEntry]
		if c := bytes.Compare(a[:16], b[:16]); c > 0 || c == 0 && binary.LittleEndian.Uint32(a[16:]) > binary.LittleEndian.Uint32(b[16:]) {
			t.Fatalf("ids out of order at %d", i)
		}
	}
	for i := 1; i < s.nRanges; i++ {
		a, b := out.ranges[(i-1)*rangeEntry:], out.ranges[i*rangeEntry:]
		ka := [3]uint64{binary.LittleEndian.Uint64(a), uint64(binary.LittleEndian.Uint32(a[8:])), uint64(binary.LittleEndian.Uint32(a[12:]))}
		kb := [3]uint64{binary.LittleEndian.Uint64(b), uint64(binary.LittleEndian.Uint32(b[8:])), uint64(binary.LittleEndian.Uint32(b[12:]))}
		if slices.Compare(ka[:], kb[:]) > 0 {
			t.Fatalf("ranges out of order at %d", i)
		}
	}
	for i := range s.nKeys {
		k := s.key(i)
		if i > 0 && s.key(i-1) >= k {
			t.Fatalf("keys out of order at %d", i)
		}
		lines, err := s.postings(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			out.post[k] = append(out.post[k], uint32(l-ref.FirstLine))
		}
	}
	return out
}

// TestSortRangeEntsMatchesComparison holds the radix sort of the range
// table to a comparison sort by (prefix, line, length), on tables in line
// order as the build makes them, large enough for the radix path, with
// repeated prefixes, prefixes that share digits, and several ranges of one
// prefix on one line.
func TestSortRangeEntsMatchesComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 5, 1<<12 - 1, 1 << 12, 50000} {
		for _, shape := range []string{"random", "few prefixes", "high digits only", "low digits only"} {
			es := make([]rangeEnt, n)
			rel := uint32(0)
			for i := range es {
				if r.IntN(3) == 0 {
					rel += uint32(r.IntN(3))
				}
				var h uint64
				switch shape {
				case "random":
					h = r.Uint64()
				case "few prefixes":
					h = uint64(r.IntN(40)) * 0x9e3779b97f4a7c15
				case "high digits only":
					h = uint64(r.IntN(1000)) << 48
				case "low digits only":
					h = uint64(r.IntN(1000))
				}
				es[i] = rangeEnt{h8: h, rel: rel, ln: uint32(r.IntN(4))}
			}
			want := slices.Clone(es)
			slices.SortFunc(want, func(x, y rangeEnt) int {
				return slices.Compare([]uint64{x.h8, uint64(x.rel), uint64(x.ln)}, []uint64{y.h8, uint64(y.rel), uint64(y.ln)})
			})
			sortRangeEnts(es)
			if !slices.Equal(es, want) {
				t.Fatalf("%d entries, %s: the sort differs from the comparison sort", n, shape)
			}
		}
	}
}

func TestSortIDEnts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	es := make([]idEnt, 10000)
	for i := range es {
		es[i] = idEnt{hi: uint64(r.IntN(50)), lo: uint64(r.IntN(3)), rel: uint32(i)}
	}
	want := slices.Clone(es)
	slices.SortStableFunc(want, func(x, y idEnt) int {
		return slices.Compare([]uint64{x.hi, x.lo}, []uint64{y.hi, y.lo})
	})
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	sortIDEnts(es)
	if !slices.Equal(es, want) {
		t.Fatal("ids not sorted by id, then line")
	}
}

func TestDecodeUUIDText(t *testing.T) {
	for range 1000 {
		u := uuid.New()
		for _, text := range []string{u.String(), strings.ToUpper(u.String())} {
			var got [16]byte
			decodeUUIDText([]byte(text), &got)
			if got != u {
				t.Fatalf("decodeUUIDText(%s) = %x, want %x", text, got, u[:])
			}
		}
	}
}
