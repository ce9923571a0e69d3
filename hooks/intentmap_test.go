package hooks_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
)

// mapEnv is a workspace's .orchestration with its ledger and intents, for
// driving the intent map policy directly.
type mapEnv struct {
	t       *testing.T
	orch    string
	ledger  *orchestration.Ledger
	intents *orchestration.IntentStore
}

func newMapEnv(t *testing.T) *mapEnv {
	t.Helper()
	orch := filepath.Join(t.TempDir(), ".orchestration")
	if err := os.MkdirAll(orch, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orch, "active_intents.yaml"), []byte(intentsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	intents, err := orchestration.OpenIntentStore(filepath.Join(orch, "active_intents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := orchestration.OpenLedger(filepath.Join(orch, orchestration.LedgerName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &mapEnv{t: t, orch: orch, ledger: l, intents: intents}
}

// record appends the record of a change of path and tells m.
func (e *mapEnv) record(m *hooks.IntentMap, path string) error {
	e.t.Helper()
	rec, err := orchestration.NewRecord(orchestration.RecordInput{Path: path,
		Ranges: []orchestration.Range{{StartLine: 1, EndLine: 1, ContentHash: "sha256:" + fmt.Sprintf("%064x", len(path))}},
		Meta:   orchestration.Meta{Intent: "INT-001", Session: "s", Tool: "write_to_file", Mutation: orchestration.MutationCreate}})
	if err != nil {
		e.t.Fatal(err)
	}
	line, err := e.ledger.AppendLine(rec)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Recorded(rec, line)
}

func (e *mapEnv) md() []byte {
	b, _ := os.ReadFile(filepath.Join(e.orch, orchestration.IntentMapName))
	return b
}

// ledgers is intent_map.md as a rebuild from the ledger alone renders it,
// in a copy of .orchestration.
func (e *mapEnv) ledgers() []byte {
	e.t.Helper()
	ledger, err := os.ReadFile(filepath.Join(e.orch, orchestration.LedgerName))
	if err != nil {
		e.t.Fatal(err)
	}
	ref := filepath.Join(e.t.TempDir(), ".orchestration")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ref, orchestration.LedgerName), ledger, 0o644); err != nil {
		e.t.Fatal(err)
	}
	set, err := e.intents.Current()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := orchestration.RebuildIntentMap(ref, set.Intents, filepath.Join(ref, orchestration.LedgerName)); err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ref, orchestration.IntentMapName))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// A process that dies with a batch of map updates held back (a crash, or
// SIGKILL) leaves intent_map.md behind the ledger; the next update, by any
// process, shows every record, its own and the lost batch's.
func TestIntentMapLostBatchRepairedByNextUpdate(t *testing.T) {
	e := newMapEnv(t)
	crashed := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour) // never flushed: it "dies"
	for i := range 5 {
		if err := e.record(crashed, fmt.Sprintf("src/lost%d.txt", i)); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Contains(e.md(), []byte("src/lost")) {
		t.Fatalf("the batch was written before its time:\n%s", e.md())
	}

	next := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour)
	if err := e.record(next, "src/next.txt"); err != nil {
		t.Fatal(err)
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	got, want := e.md(), e.ledgers()
	if !bytes.Equal(got, want) {
		t.Fatalf("after the next update intent_map.md is\n%s\nwant what the ledger renders:\n%s", got, want)
	}
	for _, p := range []string{"src/lost0.txt", "src/lost4.txt", "src/next.txt", "(6 records)"} {
		if !bytes.Contains(got, []byte(p)) {
			t.Errorf("intent_map.md lacks %s:\n%s", p, got)
		}
	}
}

// A batch is written by its timer while the process runs, without a Flush.
func TestIntentMapBatchWrittenByItsTimer(t *testing.T) {
	e := newMapEnv(t)
	m := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, 10*time.Millisecond)
	t.Cleanup(func() { m.Close() })
	for i := range 3 {
		if err := e.record(m, fmt.Sprintf("src/t%d.txt", i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !bytes.Contains(e.md(), []byte("(3 records)")) {
		if time.Now().After(deadline) {
			t.Fatalf("the batch was never written:\n%s", e.md())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := e.md(), e.ledgers(); !bytes.Equal(got, want) {
		t.Fatalf("intent_map.md is\n%s\nwant\n%s", got, want)
	}
}

// A batched update that fails is not lost in the background: the next record
// updates at once and its call gets the error; once the cause is gone, the
// map shows everything.
func TestIntentMapBatchFailureReportedToNextCall(t *testing.T) {
	e := newMapEnv(t)
	m := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour)
	t.Cleanup(func() { m.Close() })
	if err := e.record(m, "src/a.txt"); err != nil {
		t.Fatal(err)
	}
	// intent_map.md replaced by a link out of the workspace: no update may
	// write through it.
	outside := filepath.Join(t.TempDir(), "outside.md")
	mdPath := filepath.Join(e.orch, orchestration.IntentMapName)
	os.Remove(mdPath)
	if err := os.Symlink(outside, mdPath); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := m.Flush(); err == nil {
		t.Fatal("Flush through a linked intent_map.md succeeded")
	}
	if err := e.record(m, "src/b.txt"); err == nil {
		t.Fatal("the record after a failed batch was not told of the failure")
	}
	if _, err := os.Lstat(outside); err == nil {
		t.Fatal("the map was written through the link")
	}
	os.Remove(mdPath)
	if err := e.record(m, "src/c.txt"); err != nil {
		t.Fatalf("after the link is gone: %v", err)
	}
	if got, want := e.md(), e.ledgers(); !bytes.Equal(got, want) || !bytes.Contains(got, []byte("src/a.txt")) {
		t.Fatalf("intent_map.md is\n%s\nwant\n%s", got, want)
	}
}

// A batch that another process's update already shows is not shown again;
// but a process closing (or flushing on demand) still updates when anything
// was appended since that update: here a record of a process that died with
// its batch held, which would otherwise wait for some later update.
func TestIntentMapCloseShowsRecordsAppendedSince(t *testing.T) {
	e := newMapEnv(t)
	b := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour)
	if err := e.record(b, "src/b.txt"); err != nil {
		t.Fatal(err)
	}
	a := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour)
	if err := e.record(a, "src/a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	set, err := e.intents.Current()
	if err != nil {
		t.Fatal(err)
	}
	shown := orchestration.ReadIntentMapShown(e.orch, set.Intents)
	if !shown.Valid || !shown.Current || !shown.Whole || !shown.Covers(e.ledger.Wrote()) {
		t.Fatalf("after an update the mark says %+v, want it to show the whole ledger", shown)
	}
	// The record of a process that dies before its batch is due.
	died := hooks.NewIntentMapEvery(e.intents, e.orch, e.ledger, time.Hour)
	if err := e.record(died, "src/died.txt"); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(e.md(), []byte("src/died.txt")) {
		t.Fatal("the held batch was shown before its time")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got, want := e.md(), e.ledgers()
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte("src/died.txt")) {
		t.Fatalf("after the last process closed intent_map.md is\n%s\nwant\n%s", got, want)
	}
}
