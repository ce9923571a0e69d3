//go:build unix

package orchestration

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
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

// Four children append at once, sharing fsyncs through the sync mark, and
// one of them at a time is killed with SIGKILL at a random point (in a
// write, holding the ledger's lock or the sync lock, between an fsync and
// its mark, in the mark's write) and started again. The others go on: a
// lock dies with its holder, a torn tail is repaired by the next append, a
// torn mark is ignored. At the end every acknowledged record is in the
// ledger and the chain is one line after another.
func TestLedgerCrashConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 16 processes")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("seed %d", seed)
	type child struct {
		cmd *exec.Cmd
		r   *bufio.Reader
		out []byte
	}
	var acknowledged []string
	start := func() *child {
		cmd := ledgerTestChild(t, "loop", path)
		cmd.Stderr = nil // the kill may interrupt a write to it
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &child{cmd: cmd, r: bufio.NewReader(stdout)}
	}
	kill := func(c *child) {
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(c.r) // what it acknowledged before the kill landed
		c.out = append(c.out, rest...)
		c.cmd.Wait()
		acknowledged = append(acknowledged, ledgerTestIDs(c.out)...)
	}
	children := make([]*child, 4)
	for i := range children {
		children[i] = start()
	}
	for k := range 16 {
		i := rng.IntN(len(children))
		c := children[i]
		for acks := 1 + rng.IntN(4); acks > 0; {
			line, err := c.r.ReadBytes('\n')
			c.out = append(c.out, line...)
			if err != nil {
				for _, c := range children {
					c.cmd.Process.Kill()
					c.cmd.Wait()
				}
				t.Fatalf("kill %d: child %d ended on its own: %v", k, i, err)
			}
			if bytes.HasPrefix(line, []byte("id:")) {
				acks--
			}
		}
		kill(c)
		children[i] = start()
	}
	for _, c := range children {
		kill(c)
	}
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("OpenLedger after the kills: %v", err)
	}
	l.Close()
	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.TornTail != 0 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	have := ledgerTestIDSet(t, path)
	for _, id := range acknowledged {
		if !have[id] {
			t.Fatalf("record %s was acknowledged but is not in the ledger", id)
		}
	}
	t.Logf("%d records in the ledger, %d acknowledged", rep.Lines, len(acknowledged))
}
