package hooks

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/intentgate/intentgate/orchestration"
)

// IntentMapEvery is how long the intent map may lag the ledger in a process
// that keeps running: records appended within it are folded into one update
// of intent_map.md, not one each. The map is derived from the ledger, and
// every update folds all the records appended since the last one, by any
// process; so a batch lost to a crash is shown by the next update, whoever
// makes it.
const IntentMapEvery = orchestration.BatchEvery

// IntentMap keeps .orchestration/intent_map.md up to date: the records the
// trace appends are folded into a derived summary and the map is rewritten
// atomically, at a cost that does not grow with the ledger, at most once per
// IntentMapEvery and when the process is done (Flush, Close).
//
// Processes sharing a workspace share the updates too (see
// orchestration.IntentMapShown): a batch that the last update by any process
// already shows is dropped, and a batch due soon after another process's
// update waits for that process's next one, so that while sessions write
// steadily one process updates the map for all.
type IntentMap struct {
	intents Intents
	orchDir string
	every   time.Duration
	ledger  *orchestration.Ledger // where this process's records end; nil: unknown

	flushMu sync.Mutex // one update at a time

	mu      sync.Mutex
	pending []pendingRecord // appended since the last update
	dirty   bool
	timer   *time.Timer
	failed  bool // the last update failed: update at once until one succeeds
	closed  bool
}

type pendingRecord struct {
	orchestration.RecordedLine
	at    orchestration.LedgerPos // at or after the record's end; unknown without a ledger
	noted time.Time
}

// NewIntentMap returns the intent map policy for the .orchestration
// directory, batching updates over IntentMapEvery. ledger, when not nil, is
// the ledger the trace appends to: knowing where its records end, the policy
// can tell when another process's update already shows them.
func NewIntentMap(intents Intents, orchDir string, ledger *orchestration.Ledger) *IntentMap {
	return NewIntentMapEvery(intents, orchDir, ledger, IntentMapEvery)
}

// NewIntentMapEvery is NewIntentMap batching over every; 0 updates the map
// after each record.
func NewIntentMapEvery(intents Intents, orchDir string, ledger *orchestration.Ledger, every time.Duration) *IntentMap {
	return &IntentMap{intents: intents, orchDir: orchDir, every: every, ledger: ledger}
}

// Recorded notes rec, just appended as line, for the next update of the map.
// The update runs at once (and its error is returned) when batching is off,
// after Close, and after a batched update failed, so that a map that cannot
// be written is reported to the call that changed something, not lost.
func (m *IntentMap) Recorded(rec *orchestration.Record, line []byte) error {
	var at orchestration.LedgerPos
	if m.ledger != nil {
		at = m.ledger.Wrote()
	}
	m.mu.Lock()
	if rec != nil && line != nil {
		m.pending = append(m.pending, pendingRecord{orchestration.RecordedLine{Rec: rec, Line: line}, at, time.Now()})
	}
	m.dirty = true
	now := m.every <= 0 || m.closed || m.failed
	if !now && m.timer == nil {
		m.timer = time.AfterFunc(m.every, m.flushLater)
	}
	m.mu.Unlock()
	if now {
		return m.Flush()
	}
	return nil
}

// flushLater is the batch's timer. An error is kept for the next record,
// which then updates at once and reports it.
func (m *IntentMap) flushLater() {
	m.flush(true)
}

// Flush updates the map now with every record noted since the last update,
// unless an update by another process already shows them.
func (m *IntentMap) Flush() error { return m.flush(false) }

// flush updates the map; lazy (the batch's timer) may instead hold the batch
// for another process's next update (see IntentMap).
func (m *IntentMap) flush(lazy bool) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	m.mu.Lock()
	pending, dirty := m.pending, m.dirty
	m.pending, m.dirty = nil, false
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	lazy = lazy && !m.closed && m.every > 0
	m.mu.Unlock()
	if !dirty {
		return nil
	}
	held, err := m.update(pending, lazy)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed = err != nil
	switch {
	case err != nil:
		// Tried again at the next flush, which folds these records
		// from the ledger; a later record's end covers theirs.
		m.dirty = true
	case held.wait > 0:
		// Held for another process's update: back at the head of the
		// batch, and due when that update is. Close, meanwhile, finds
		// it there.
		m.pending = append(held.records, m.pending...)
		m.dirty = true
		if m.timer == nil && !m.closed {
			m.timer = time.AfterFunc(held.wait, m.flushLater)
		}
	}
	return err
}

// Close flushes the batch; records noted afterwards update the map at once.
// A failure is also told on stderr, since no call is left to report it:
// the next update, by any process, shows the records.
func (m *IntentMap) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	err := m.Flush()
	if err != nil {
		fmt.Fprintf(os.Stderr, "intentgate: %v\n", err)
	}
	return err
}

// heldBatch is a batch held for another process's update: the records it
// does not show yet, and how long until that update is due.
type heldBatch struct {
	records []pendingRecord
	wait    time.Duration
	shown   bool // nothing to hold: the map shows them all
}

// update shows pending in the map, unless the last update (by any process)
// already shows them. lazy lets it hold them instead for another process's
// next update, when one updated less than a batch's time ago and none of
// them has waited two batches' time.
func (m *IntentMap) update(pending []pendingRecord, lazy bool) (held heldBatch, err error) {
	if err := orchestration.CheckIntact(m.orchDir, orchestration.LedgerName, orchestration.IntentMapName,
		orchestration.IntentMapSummaryName, orchestration.IntentMapLockName); err != nil {
		return heldBatch{}, fmt.Errorf("update intent_map.md: %w", err)
	}
	set, err := m.intents.Current()
	if err != nil {
		return heldBatch{}, fmt.Errorf("update intent_map.md: %w", err)
	}
	known := make([]orchestration.RecordedLine, len(pending))
	for i, p := range pending {
		known[i] = p.RecordedLine
	}
	_, err = orchestration.UpdateIntentMapIf(m.orchDir, set.Intents, known, func(shown orchestration.IntentMapShown) bool {
		held = m.hold(pending, shown, lazy)
		return held.records == nil && held.wait == 0 && !held.shown
	})
	if err != nil {
		return heldBatch{}, fmt.Errorf("update intent_map.md: %w", err)
	}
	return held, nil
}

// hold decides, knowing what the last update showed, whether pending is
// shown already, or may be held for another process's next update.
func (m *IntentMap) hold(pending []pendingRecord, shown orchestration.IntentMapShown, lazy bool) heldBatch {
	if len(pending) == 0 {
		return heldBatch{}
	}
	var rest []pendingRecord
	oldest := time.Now()
	for _, p := range pending {
		if !shown.Covers(p.at) {
			rest = append(rest, p)
			if p.noted.Before(oldest) {
				oldest = p.noted
			}
		}
	}
	switch {
	case len(rest) == 0 && shown.Current && (lazy || shown.Whole):
		// Shown already. A flush that is not the batch's timer (Close,
		// a front door about to hand over) also waits for nothing
		// appended since, whoever appended it: a process that died
		// with a batch held is shown then at the latest.
		return heldBatch{shown: true}
	case len(rest) > 0 && lazy && shown.Valid && !shown.Mine && time.Since(oldest) < 2*m.every:
		// The process that updated last updates again once its own
		// batch is due; the others wait a little longer (and not all
		// for the same instant), so that it stays the one that works.
		due := time.Until(shown.At.Add(m.every + m.every/4 + rand.N(m.every/4+1)))
		if due > 0 && due <= 2*m.every {
			return heldBatch{records: rest, wait: due}
		}
	}
	return heldBatch{}
}
