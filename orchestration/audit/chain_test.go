package audit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// chunkedChain runs verify's chunked reader and chain check over the file,
// cutting it into chunks of size bytes (small sizes put chunk boundaries
// everywhere, and lines longer than a chunk).
func chunkedChain(t testing.TB, path string, size, workers int) *orchestration.ChainReport {
	t.Helper()
	chain := newFastChain()
	ws := make([]verifyWorker, workers)
	err := runChunks(path, chunkOptions{size: size, workers: workers},
		func(w int, c *lineChunk) *verifyChunk { return ws[w].chunk(c) },
		func(c *lineChunk, vc *verifyChunk) error {
			ni := 0
			for k := range vc.lines {
				end := len(c.data)
				if k+1 < len(vc.at) {
					end = int(vc.at[k+1])
				}
				full := c.data[vc.at[k]:end]
				var parseErr, badPrev string
				for ; ni < len(vc.notes) && vc.notes[ni].k == k; ni++ {
					switch vc.notes[ni].kind {
					case noteParseErr:
						parseErr = vc.notes[ni].text
					case noteBadPrev:
						badPrev = vc.notes[ni].text
					}
				}
				chain.add(&vc.lines[k], trimCR(full[:len(full)-1]), parseErr, badPrev)
			}
			if c.torn != nil {
				chain.torn(len(c.torn))
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return chain.report()
}

// mutations a hostile agent (or a crash, or a merge) makes of a ledger.
func mutateLedger(t testing.TB, r *rand.Rand, lines [][]byte) [][]byte {
	out := clone(lines)
	for range 1 + r.IntN(4) {
		if len(out) == 0 {
			out = append(out, []byte("garbage\n"))
		}
		i := r.IntN(len(out))
		switch r.IntN(12) {
		case 0: // delete
			out = append(out[:i], out[i+1:]...)
		case 1: // duplicate (same id, same bytes)
			out = append(out[:i+1], out[i:]...)
		case 2: // swap
			j := r.IntN(len(out))
			out[i], out[j] = out[j], out[i]
		case 3: // edit a byte of the session
			out[i] = bytes.Replace(out[i], []byte(`"session":"s`), []byte(`"session":"z`), 1)
		case 4: // a line that is no record
			out = append(out[:i], append([][]byte{[]byte("{not json\n")}, out[i:]...)...)
		case 5: // a forged record linked to an earlier line (a fork)
			out = append(out[:i], append([][]byte{forgedLine(t, out, r.IntN(i+1))}, out[i:]...)...)
		case 6: // a record without intentgate's metadata
			out = append(out[:i], append([][]byte{[]byte(`{"version":"0.1.0","id":"0190a3c4-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00Z","files":[]}` + "\n")}, out[i:]...)...)
		case 7: // a prev that is no link
			out[i] = bytes.Replace(out[i], []byte(`"prev":"sha256:`), []byte(`"prev":"md5:`), 1)
		case 8: // a prev emptied (a new chain)
			if k := bytes.Index(out[i], []byte(`"prev":"sha256:`)); k >= 0 {
				out[i] = append(append(append([]byte{}, out[i][:k]...), `"prev":""`...), out[i][k+len(`"prev":"sha256:`)+65:]...)
			}
		case 9: // the same record re-spaced: not canonical, still valid
			out[i] = bytes.Replace(out[i], []byte(`,"files":`), []byte(`, "files": `), 1)
		case 10: // CRLF
			out[i] = bytes.Replace(out[i], []byte("\n"), []byte("\r\n"), 1)
		case 11: // an uppercase id (the same UUID) on a copy of a line
			dup := bytes.Clone(out[i])
			if k := bytes.Index(dup, []byte(`"id":"`)); k >= 0 {
				copy(dup[k+6:k+42], bytes.ToUpper(dup[k+6:k+42]))
			}
			out = append(out, dup)
		}
	}
	return out
}

// TestFastChainMatchesChainVerifier holds verify's chunked chain check to
// orchestration.VerifyChain, line by line, on ledgers damaged at random:
// the same problems with the same details, forks, heads and torn tail,
// whatever the chunk size and the number of workers.
func TestFastChainMatchesChainVerifier(t *testing.T) {
	_, ledger := testWorkspace(t, 40)
	lines := readLines(t, ledger)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for round := range 150 {
		mut := mutateLedger(t, r, lines)
		data := bytes.Join(mut, nil)
		if round%3 == 0 && len(data) > 10 { // a torn tail
			data = data[:len(data)-1-r.IntN(10)]
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := orchestration.VerifyChain(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range want.Problems {
			seen[string(p.Fault)]++
		}
		if len(want.Forks) > 0 {
			seen["fork"]++
		}
		if want.TornTail > 0 {
			seen["torn"]++
		}
		for _, size := range []int{64, 700, 1 << 20} {
			got := chunkedChain(t, path, size, 1+round%3)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, chunks of %d: the chunked chain check differs:\n got %+v\nwant %+v", round, size, got, want)
			}
		}
	}
	for _, k := range []string{"unparsable", "unlinked", "broken", "reordered", "duplicate", "fork", "torn"} {
		if seen[k] == 0 {
			t.Errorf("no round had a %s line: the mutations do not cover it", k)
		}
	}
	t.Logf("faults met: %v", seen)
}

// TestVerifyFindsTheSameAtAnyChunkSize: the verdict of Verify on a damaged
// ledger does not depend on where the chunks are cut.
func TestChunksCutAtLines(t *testing.T) {
	_, ledger := testWorkspace(t, 30)
	data, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "torn"...)
	if err := os.WriteFile(ledger, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 50, 333, 4096, 1 << 22} {
		var got []byte
		var torn []byte
		var offs []int64
		err := runChunks(ledger, chunkOptions{size: size, workers: 2},
			func(int, *lineChunk) int { return 0 },
			func(c *lineChunk, _ int) error {
				offs = append(offs, c.off)
				if int64(len(got)) != c.off {
					return fmt.Errorf("chunk at %d follows %d bytes", c.off, len(got))
				}
				if len(c.data) > 0 && c.data[len(c.data)-1] != '\n' {
					return fmt.Errorf("chunk at %d does not end a line", c.off)
				}
				got = append(got, c.data...)
				torn = append(torn, c.torn...)
				return nil
			})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if string(torn) != "torn" || !bytes.Equal(append(got, torn...), data) {
			t.Fatalf("size %d: the chunks do not make the file again (torn %q)", size, torn)
		}
	}
}
