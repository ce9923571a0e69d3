package audit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// Random edit histories (inserts, replacements, deletions, moves) with the
// truth of who wrote each line kept alongside: with every version
// snapshotted (trace-time capture), blame must name the true writer of every
// line whose content is unique in the file. From the ledger alone it may
// leave lines unattributed, and may name a record that moved a line (its
// range holds exactly those lines, and a move it cannot prove is, to the
// ledger, a write), but never anyone else.
func TestBlameRandomHistories(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		for _, capture := range []bool{true, false} {
			t.Run(fmt.Sprintf("seed=%d/capture=%v", seed, capture), func(t *testing.T) {
				blameHistory(t, seed, capture, false)
			})
		}
	}
}

// The same histories with every snapshot in a file of its own, as a
// workspace kept them before packs: blame reads them the same.
func TestBlameRandomHistoriesSnapshotFiles(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			blameHistory(t, seed, true, true)
		})
	}
}

func blameHistory(t *testing.T, seed uint64, capture, files bool) {
	r := rand.New(rand.NewPCG(seed, seed*7919))
	s := newSim(t)
	c := NewCapture(s.ws, s.ledger)
	defer c.Close()
	const p = "src/f.go"
	var text, who []string
	var movers []map[string]bool // per line, the records that moved it
	next := 0
	line := func() string {
		next++
		switch r.IntN(12) {
		case 0:
			return "}"
		case 1:
			return ""
		}
		return fmt.Sprintf("\tv%d := work(%d) // seed %d", next, r.IntN(1e6), seed)
	}
	content := func() string {
		if len(text) == 0 {
			return ""
		}
		return strings.Join(text, "\n") + "\n"
	}
	for step := 0; step < 40; step++ {
		var newText []string
		var newWho []string
		var newMovers []map[string]bool
		moved := map[int]bool{} // lines of newText this step moved
		mark := "new"
		n := len(text)
		switch op := r.IntN(10); {
		case n < 6 || op < 3: // insert
			at := r.IntN(n + 1)
			blk := make([]string, 1+r.IntN(6))
			for i := range blk {
				blk[i] = line()
			}
			newText = append(append(append([]string{}, text[:at]...), blk...), text[at:]...)
			newWho = append(append(append([]string{}, who[:at]...), repeat(mark, len(blk))...), who[at:]...)
			newMovers = append(append(append([]map[string]bool{}, movers[:at]...), make([]map[string]bool, len(blk))...), movers[at:]...)
		case op < 6: // replace
			at := r.IntN(n - 1)
			m := min(1+r.IntN(4), n-at)
			blk := make([]string, 1+r.IntN(4))
			for i := range blk {
				blk[i] = line()
			}
			newText = append(append(append([]string{}, text[:at]...), blk...), text[at+m:]...)
			newWho = append(append(append([]string{}, who[:at]...), repeat(mark, len(blk))...), who[at+m:]...)
			newMovers = append(append(append([]map[string]bool{}, movers[:at]...), make([]map[string]bool, len(blk))...), movers[at+m:]...)
		case op < 8: // delete
			at := r.IntN(n - 1)
			m := min(1+r.IntN(3), n-at-1)
			newText = append(append([]string{}, text[:at]...), text[at+m:]...)
			newWho = append(append([]string{}, who[:at]...), who[at+m:]...)
			newMovers = append(append([]map[string]bool{}, movers[:at]...), movers[at+m:]...)
		default: // move a block
			m := 2 + r.IntN(min(5, n-2))
			from := r.IntN(n - m + 1)
			bt, bw := append([]string{}, text[from:from+m]...), append([]string{}, who[from:from+m]...)
			rt := append(append([]string{}, text[:from]...), text[from+m:]...)
			rw := append(append([]string{}, who[:from]...), who[from+m:]...)
			to := r.IntN(len(rt) + 1)
			newText = append(append(append([]string{}, rt[:to]...), bt...), rt[to:]...)
			newWho = append(append(append([]string{}, rw[:to]...), bw...), rw[to:]...)
			bm := append([]map[string]bool{}, movers[from:from+m]...)
			rm := append(append([]map[string]bool{}, movers[:from]...), movers[from+m:]...)
			newMovers = append(append(append([]map[string]bool{}, rm[:to]...), bm...), rm[to:]...)
			for i := to; i < to+m; i++ {
				moved[i] = true
			}
		}
		before := content()
		text = newText
		id := s.write(p, content(), "s")
		// The diff may express a move the other way round (the block
		// stays, its neighbours move): every old line the record's ranges
		// cover was moved by it, as far as the ledger can know.
		ranges, _ := orchestration.ComputeRanges([]byte(before), []byte(content()))
		for _, rg := range ranges {
			for i := rg.StartLine - 1; i < rg.EndLine; i++ {
				if newWho[i] != mark {
					moved[i] = true
				}
			}
		}
		for i, w := range newWho {
			if w == mark {
				newWho[i] = id
			}
		}
		who = newWho
		for i := range newMovers {
			if moved[i] {
				m := map[string]bool{id: true}
				for k := range newMovers[i] {
					m[k] = true
				}
				newMovers[i] = m
			}
		}
		movers = newMovers
		switch {
		case capture && files:
			b := []byte(content())
			p := snapPath(indexDir(s.ledger), snap.SHA256Hex(b))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, legacySnapshot(fingerprints(snap.SplitLines(b))), 0o644); err != nil {
				t.Fatal(err)
			}
		case capture:
			if err := c.Keep([]byte(content())); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := Blame(BlameOptions{Workspace: s.ws, Path: p, NoIndex: !capture})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range text {
		count[l]++
	}
	attributed, unique := 0, 0
	for i, l := range res.Lines {
		if count[l.Text] != 1 || nonBlank([]byte(l.Text)) < 8 {
			continue // which "}" is which is not a question content can answer
		}
		unique++
		switch {
		case l.Record == nil && capture:
			t.Errorf("line %d %q unattributed (%s), written by %s", i+1, l.Text, l.Reason, who[i])
		case l.Record == nil:
		case l.Record.Record != who[i] && (capture || !movers[i][l.Record.Record]):
			t.Errorf("line %d %q attributed to %s (%s), written by %s", i+1, l.Text, l.Record.Record, l.Record.Evidence, who[i])
		default:
			attributed++
		}
	}
	t.Logf("%d of %d unique lines attributed", attributed, unique)
	if files {
		// Every version blame could keep is in a file already: it found
		// them there, so it appended none to a pack.
		if _, err := os.Stat(filepath.Join(indexDir(s.ledger), "snap", "pack")); err == nil {
			t.Error("blame appended snapshots it had in files to a pack")
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
