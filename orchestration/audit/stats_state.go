package audit

import (
	"math/bits"
	"sort"
)

// statState is the ledger's count so far, in a form that more lines can be
// added to: what a full count builds from nothing and the stats cache
// keeps, so that a count extended from the cache and a count from scratch
// are the same code adding the same lines.
type statState struct {
	lines, records, unpars int
	paths                  []string         // path number -> path
	pathNo                 map[string]int32 // path -> its number
	tabs                   [3]map[string]*stateRow
}

// The tables of a statState.
const (
	tabIntent = iota
	tabModel
	tabTool
)

type stateRow struct {
	records, changes, linesAdded, violations, denials int
	codes                                             map[string]int
	files                                             []uint64 // bit n: the state's path n
}

func newStatState() *statState {
	s := &statState{pathNo: map[string]int32{}}
	for i := range s.tabs {
		s.tabs[i] = map[string]*stateRow{}
	}
	return s
}

func (s *statState) path(p string) int32 {
	n, ok := s.pathNo[p]
	if !ok {
		n = int32(len(s.paths))
		s.paths = append(s.paths, p)
		s.pathNo[p] = n
	}
	return n
}

func (s *statState) row(tab int, key string) *stateRow {
	r := s.tabs[tab][key]
	if r == nil {
		r = &stateRow{codes: map[string]int{}}
		s.tabs[tab][key] = r
	}
	return r
}

func (r *stateRow) setFile(n int32) {
	for int(n/64) >= len(r.files) {
		r.files = append(r.files, 0)
	}
	r.files[n/64] |= 1 << (n % 64)
}

// addWorker adds what one stats worker counted.
func (s *statState) addWorker(w *statWorker) {
	s.lines += w.lines
	s.records += w.records
	s.unpars += w.unpars
	global := make([]int32, len(w.paths.names)) // the worker's path number -> the state's
	for i, p := range w.paths.names {
		global[i] = s.path(p)
	}
	for tab, acc := range []*statAcc{w.intents, w.models, w.tools} {
		if acc == nil {
			continue
		}
		for k, x := range acc.rows {
			r := s.row(tab, k)
			r.records += x.Records
			r.changes += x.Changes
			r.linesAdded += x.LinesAdded
			r.violations += x.Violations
			r.denials += x.Denials
			for c, n := range x.codes {
				r.codes[c] += *n
			}
			for wi, word := range x.files {
				for word != 0 {
					b := bits.TrailingZeros64(word)
					r.setFile(global[wi*64+b])
					word &= word - 1
				}
			}
		}
	}
}

// stats is the count as `trace stats` reports it: rows sorted by key.
func (s *statState) stats() *Stats {
	out := &Stats{Lines: s.lines, Records: s.records, Unparsable: s.unpars}
	rows := func(t map[string]*stateRow) []StatRow {
		rs := make([]StatRow, 0, len(t))
		for k, r := range t {
			row := StatRow{Key: k, Records: r.records, Changes: r.changes, LinesAdded: r.linesAdded,
				Violations: r.violations, Denials: r.denials}
			for _, w := range r.files {
				row.FilesTouched += bits.OnesCount64(w)
			}
			if len(r.codes) > 0 {
				row.DenialCodes = make(map[string]int, len(r.codes))
				for c, n := range r.codes {
					row.DenialCodes[c] = n
				}
			}
			rs = append(rs, row)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Key < rs[j].Key })
		return rs
	}
	out.ByIntent, out.ByModel, out.ByTool = rows(s.tabs[tabIntent]), rows(s.tabs[tabModel]), rows(s.tabs[tabTool])
	return out
}
