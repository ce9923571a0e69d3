// Package orchestration owns a workspace's .orchestration/ directory: the
// formats and the stores of everything intentgate keeps there.
//
//	.orchestration/
//	  active_intents.yaml  the intents people declare (IntentStore, reloaded on change)
//	  agent_trace.jsonl    the hash-chained Agent Trace ledger (Ledger)
//	  intent_map.md        which intent changed which code (UpdateIntentMap)
//	  modes.yaml           custom modes (ModeStore)
//	  config.yaml          settings, e.g. on_violation (ConfigStore)
//	  sessions/            per-session state, not committed (SessionStore)
//	  tasks/               the tasks of intentgate run (agent.Store)
//
// Open returns all the stores of one workspace; the file names are declared
// here once. Every store is safe for concurrent use by many goroutines and,
// through file locks, by many processes.
package orchestration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The names of .orchestration/ and what it holds.
const (
	DirName     = ".orchestration"
	IntentsName = "active_intents.yaml"
	ModesName   = "modes.yaml"
	ConfigName  = "config.yaml"
	SessionsDir = "sessions"
	// TasksDir holds the tasks of intentgate's own agent (intentgate run).
	TasksDir = "tasks"
)

// Stores is the .orchestration/ directory of one workspace, opened.
type Stores struct {
	Dir string // the .orchestration directory
	// Intents is the live intents store; nil when the file could not be
	// loaded, and IntentsErr says why (every mutating call is then refused).
	Intents    *IntentStore
	IntentsErr error
	Sessions   *SessionStore
	Ledger     *Ledger
	Modes      *ModeStore
	Config     *ConfigStore
}

// Open opens the stores of the workspace at the directory workspace. The
// .orchestration directory must exist (`intentgate init` creates it): Open
// never creates it.
func Open(workspace string) (*Stores, error) {
	dir := filepath.Join(workspace, DirName)
	if _, err := os.Lstat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has no %s/: run `intentgate init` there first", workspace, DirName)
		}
		return nil, err
	}
	s := &Stores{Dir: dir}
	s.Intents, s.IntentsErr = OpenIntentStore(filepath.Join(dir, IntentsName))
	if s.IntentsErr != nil {
		s.Intents = nil
		s.IntentsErr = fmt.Errorf("cannot load intents: %w", s.IntentsErr)
	}
	s.Sessions = OpenSessions(filepath.Join(dir, SessionsDir))
	var err error
	if s.Ledger, err = OpenLedger(filepath.Join(dir, LedgerName)); err != nil {
		s.Close()
		return nil, err
	}
	s.Modes = OpenModes(filepath.Join(dir, ModesName))
	s.Config = &ConfigStore{path: filepath.Join(dir, ConfigName)}
	return s, nil
}

// Close releases what Open holds.
func (s *Stores) Close() error {
	var errs []error
	if s.Sessions != nil {
		errs = append(errs, s.Sessions.Close())
	}
	if s.Intents != nil {
		errs = append(errs, s.Intents.Close())
	}
	if s.Ledger != nil {
		errs = append(errs, s.Ledger.Close())
	}
	return errors.Join(errs...)
}
