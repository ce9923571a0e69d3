package hooks

import (
	"fmt"
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
type IntentMap struct {
	intents Intents
	orchDir string
	every   time.Duration

	flushMu sync.Mutex // one update at a time

	mu      sync.Mutex
	pending []orchestration.RecordedLine // appended since the last update
	dirty   bool
	timer   *time.Timer
	failed  bool // the last update failed: update at once until one succeeds
	closed  bool
}

// NewIntentMap returns the intent map policy for the .orchestration
// directory, batching updates over IntentMapEvery.
func NewIntentMap(intents Intents, orchDir string) *IntentMap {
	return NewIntentMapEvery(intents, orchDir, IntentMapEvery)
}

// NewIntentMapEvery is NewIntentMap batching over every; 0 updates the map
// after each record.
func NewIntentMapEvery(intents Intents, orchDir string, every time.Duration) *IntentMap {
	return &IntentMap{intents: intents, orchDir: orchDir, every: every}
}

// Recorded notes rec, just appended as line, for the next update of the map.
// The update runs at once (and its error is returned) when batching is off,
// after Close, and after a batched update failed, so that a map that cannot
// be written is reported to the call that changed something, not lost.
func (m *IntentMap) Recorded(rec *orchestration.Record, line []byte) error {
	m.mu.Lock()
	if rec != nil && line != nil {
		m.pending = append(m.pending, orchestration.RecordedLine{Rec: rec, Line: line})
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
	m.Flush()
}

// Flush updates the map now with every record noted since the last update.
func (m *IntentMap) Flush() error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	m.mu.Lock()
	pending, dirty := m.pending, m.dirty
	m.pending, m.dirty = nil, false
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	m.mu.Unlock()
	if !dirty {
		return nil
	}
	err := m.update(pending)
	m.mu.Lock()
	m.failed = err != nil
	if err != nil {
		m.dirty = true // tried again at the next flush
	}
	m.mu.Unlock()
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

func (m *IntentMap) update(known []orchestration.RecordedLine) error {
	if err := orchestration.CheckIntact(m.orchDir, orchestration.LedgerName, orchestration.IntentMapName,
		orchestration.IntentMapSummaryName, orchestration.IntentMapLockName); err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	set, err := m.intents.Current()
	if err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	if err := orchestration.UpdateIntentMapAfter(m.orchDir, set.Intents, known); err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	return nil
}
