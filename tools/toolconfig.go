package tools

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/intentgate/intentgate/engine"
	"go.yaml.in/yaml/v3"
)

// configPath is the workspace's governance settings. The tools below read
// only their own sections; the file is protected, so no agent can widen
// what they allow.
const configPath = ".orchestration/config.yaml"

// toolConfig is the part of config.yaml the tools of this file read.
//
//	browser:
//	  allowed_hosts: [localhost, 127.0.0.1, "*.example.test"]
//	codebase_search:
//	  embeddings:
//	    base_url: http://localhost:11434/v1   # any OpenAI-compatible endpoint
//	    model: nomic-embed-text
//	    api_key_env: OPENAI_API_KEY           # the key's environment variable, never the key
type toolConfig struct {
	Browser struct {
		AllowedHosts []string `yaml:"allowed_hosts"`
	} `yaml:"browser"`
	CodebaseSearch struct {
		Embeddings struct {
			BaseURL   string `yaml:"base_url"`
			Model     string `yaml:"model"`
			APIKeyEnv string `yaml:"api_key_env"`
		} `yaml:"embeddings"`
	} `yaml:"codebase_search"`
}

// loadToolConfig reads config.yaml; a missing file is the defaults and a
// broken one an error naming it (fail closed: a tool that cannot read its
// limits does not run).
func loadToolConfig(ws *engine.Workspace) (toolConfig, error) {
	var cfg toolConfig
	b, err := ws.ReadFile(configPath)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", configPath, unwrapPath(err))
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %v (fix the file; the browser and codebase_search sections are described in the README)", configPath, err)
	}
	return cfg, nil
}
