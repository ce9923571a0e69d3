package hooks

import (
	"fmt"

	"github.com/intentgate/intentgate/orchestration"
)

// IntentMap keeps .orchestration/intent_map.md up to date: each record the
// trace appends is folded into a derived summary and the map is rewritten
// atomically, at a cost that does not grow with the ledger.
type IntentMap struct {
	intents Intents
	orchDir string
}

// NewIntentMap returns the intent map policy for the .orchestration directory.
func NewIntentMap(intents Intents, orchDir string) *IntentMap {
	return &IntentMap{intents: intents, orchDir: orchDir}
}

// Recorded folds rec, just appended as line, into the map.
func (m *IntentMap) Recorded(rec *orchestration.Record, line []byte) error {
	if err := orchestration.CheckIntact(m.orchDir, orchestration.LedgerName, orchestration.IntentMapName,
		orchestration.IntentMapSummaryName, orchestration.IntentMapLockName); err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	set, err := m.intents.Current()
	if err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	if err := orchestration.UpdateIntentMap(m.orchDir, set.Intents, rec, line); err != nil {
		return fmt.Errorf("update intent_map.md: %w", err)
	}
	return nil
}
