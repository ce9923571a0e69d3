package orchestration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// OnViolation is what happens to the files a command changed out of scope.
type OnViolation string

const (
	// ViolationReport records the violation and tells the agent (the default).
	ViolationReport OnViolation = "report"
	// ViolationRevert also restores the files to their state before the command.
	ViolationRevert OnViolation = "revert"
)

// Config is .orchestration/config.yaml:
//
//	on_violation: report   # the default: record and tell the agent
//	on_violation: revert   # also restore what a command changed out of scope
//
// It is a governance file, so no agent can change it.
type Config struct {
	OnViolation OnViolation `yaml:"on_violation"`
}

// ConfigStore reads config.yaml when asked, so an edit applies to the next
// call without a restart.
type ConfigStore struct {
	path string
}

// Path is the file's path.
func (s *ConfigStore) Path() string { return s.path }

// Load reads the configuration. A missing file is the defaults; a broken one
// is an error naming the file and the fix, with the defaults alongside.
func (s *ConfigStore) Load() (Config, error) {
	def := Config{OnViolation: ViolationReport}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, err
	}
	var doc struct {
		OnViolation string `yaml:"on_violation"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return def, fmt.Errorf("%s: %w", s.path, err)
	}
	switch strings.TrimSpace(doc.OnViolation) {
	case "", string(ViolationReport):
		return def, nil
	case string(ViolationRevert):
		return Config{OnViolation: ViolationRevert}, nil
	}
	return def, fmt.Errorf("%s: on_violation is %q; it must be report or revert", s.path, doc.OnViolation)
}
