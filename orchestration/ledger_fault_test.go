package orchestration

import (
	"path/filepath"
	"sync"
	"testing"
)

// ledgerTestFault makes the fault point name fire the next n times.
func ledgerTestFault(t *testing.T, name string, n int) {
	t.Helper()
	Fault("") // parse the (empty) environment first
	faultMu.Lock()
	faultLeft[name] = n
	faultMu.Unlock()
	t.Cleanup(func() {
		faultMu.Lock()
		delete(faultLeft, name)
		faultMu.Unlock()
	})
}

// A failed fsync leaves the line written; appending the same record again
// syncs that line instead of writing a copy, so the ledger holds the record
// once and its chain verifies.
func TestLedgerFsyncFailureNoDuplicate(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(ledgerTestRecord(t, "INT-001", 0)); err != nil {
		t.Fatal(err)
	}
	ledgerTestFault(t, "ledger-fsync", 2)
	rec := ledgerTestRecord(t, "INT-001", 1)
	for i := range 2 {
		if err := l.Append(rec); err == nil {
			t.Fatalf("append %d with a failing fsync succeeded", i+1)
		}
	}
	if err := l.Append(rec); err != nil {
		t.Fatalf("append after the fsync recovered: %v", err)
	}
	if err := l.Append(ledgerTestRecord(t, "INT-001", 2)); err != nil {
		t.Fatal(err)
	}
	lines := ledgerTestLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("ledger has %d lines, want 3 (no duplicate of the retried record):\n%s", len(lines), lines)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
}

// Appends from many goroutines share fsyncs, and each returns only after one
// that covers its line: afterwards every acknowledged record is in the chain.
func TestLedgerGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	const n, each = 8, 25
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Append(ledgerTestRecord(t, "INT-001", g*each+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.Lines != n*each || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	// Durable through the end of the last line written. (synced may end
	// past a line of this process's own when another append's fsync covered
	// more: then only its generation and end describe it.)
	if l.synced.gen != l.wrote.gen || l.synced.end < l.wrote.end {
		t.Errorf("synced %+v, wrote %+v: the last line was acknowledged unsynced", l.synced, l.wrote)
	}
}
