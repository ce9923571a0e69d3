//go:build unix

package orchestration

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A child appending in a loop reports each acknowledged append (Append
// returned) on a pipe. The parent kills it with SIGKILL after a random number
// of acknowledgements, so the kill lands at a random point of a later append,
// over and over. After every kill the ledger opens, its chain verifies, and
// every record whose append was acknowledged is in it. No step depends on how
// fast the machine is.
func TestLedgerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 30 processes")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	var acknowledged []string
	repaired := 0
	for round := range 30 {
		cmd := ledgerTestChild(t, "loop", path)
		cmd.Stderr = nil // the kill may interrupt a write to it
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 1 + rng.IntN(8)
		r := bufio.NewReader(stdout)
		var out []byte
		for acks := 0; acks < killAfter; {
			line, err := r.ReadBytes('\n')
			out = append(out, line...)
			if err != nil {
				cmd.Wait()
				t.Fatalf("round %d: the child ended after %d acknowledgements: %v", round, acks, err)
			}
			if bytes.HasPrefix(line, []byte("id:")) {
				acks++
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r) // what it acknowledged before the kill landed
		out = append(out, rest...)
		cmd.Wait()
		acknowledged = append(acknowledged, ledgerTestIDs(out)...)

		brokenBefore, _ := os.ReadFile(path + ".broken")
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatalf("round %d: OpenLedger after SIGKILL: %v", round, err)
		}
		l.Close()
		if brokenAfter, _ := os.ReadFile(path + ".broken"); !bytes.Equal(brokenBefore, brokenAfter) {
			repaired++
		}
		rep := ledgerTestVerify(t, path)
		if !rep.OK() || rep.TornTail != 0 || len(rep.Forks) != 0 {
			t.Fatalf("round %d: VerifyChain = %v %+v", round, rep, rep.Problems)
		}
		have := ledgerTestIDSet(t, path)
		for _, id := range acknowledged {
			if !have[id] {
				t.Fatalf("round %d: record %s was acknowledged but is not in the ledger", round, id)
			}
		}
	}
	rep := ledgerTestVerify(t, path)
	t.Logf("30 kills: %d records in the ledger, %d acknowledged, %d torn tails repaired", rep.Lines, len(acknowledged), repaired)
}
