//go:build unix

package orchestration

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A child appending in a loop is killed with SIGKILL at random moments, over
// and over. After every kill the ledger opens, its chain verifies, and every
// record whose Append returned is in it.
func TestLedgerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 30 processes")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
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
		outc := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(stdout) // until the child is gone
			outc <- b
		}()
		// On a loaded machine a child may take longer to start than the
		// random delay: let it reach the ledger first (bounded, so a
		// child that never does cannot hang the test).
		for wait := 0; wait < 500 && ledgerTestMissing(path); wait++ {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		out := <-outc
		cmd.Wait()
		acknowledged = append(acknowledged, ledgerTestIDs(out)...)

		if _, err := os.Stat(path); err != nil {
			continue // killed before it created the ledger
		}
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
	if len(acknowledged) == 0 {
		t.Errorf("no child ever acknowledged an append")
	}
}

func ledgerTestMissing(path string) bool {
	_, err := os.Stat(path)
	return err != nil
}
