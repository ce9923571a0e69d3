package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// hookConfig is what .orchestration/config.yaml says about external agents.
//
//	on_violation: report   # the default: record and tell the agent
//	on_violation: revert   # also restore what a command changed out of scope
//
// Other settings may share the file; only on_violation is read here. The file
// is a governance file, so no agent can change it.
type hookConfig struct {
	revert bool
}

func loadHookConfig(orch string) (hookConfig, error) {
	path := filepath.Join(orch, "config.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return hookConfig{}, nil
	}
	if err != nil {
		return hookConfig{}, err
	}
	var doc struct {
		OnViolation string `yaml:"on_violation"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return hookConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	switch strings.TrimSpace(doc.OnViolation) {
	case "", "report":
		return hookConfig{}, nil
	case "revert":
		return hookConfig{revert: true}, nil
	}
	return hookConfig{}, fmt.Errorf("%s: on_violation is %q; it must be report or revert", path, doc.OnViolation)
}

// config loads the configuration once per event; a broken file is reported
// and the default (report) applies.
func (h *hookRun) config() hookConfig {
	if h.cfg == nil {
		cfg, err := loadHookConfig(h.g.orch)
		if err != nil {
			h.warnf("%v; violations are reported, not reverted", err)
		}
		h.cfg = &cfg
	}
	return *h.cfg
}
