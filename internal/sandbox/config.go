package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the sandbox section of .orchestration/config.yaml:
//
//	sandbox:
//	  # Directories outside the workspace that commands may write, in place
//	  # of the defaults (the Go build and module caches, npm, pnpm, yarn,
//	  # pip and ~/.cache). Absolute, or starting with ~/.
//	  writable_outside:
//	    - ~/.cache
//	    - ~/.npm
//	  # Run commands unconfined where the kernel offers no confinement
//	  # (no Landlock), on Windows, or where sandbox-exec is missing,
//	  # instead of refusing them. Not recommended: a command can then
//	  # rewrite the governance files.
//	  allow_unconfined: false
//
// The file is a governance file: no command can change it.
type Config struct {
	// WritableOutside replaces DefaultWritableOutside when set.
	WritableOutside []string
	AllowUnconfined bool
}

// DefaultWritableOutside are the build and package caches commands may
// write, so that ordinary test and build commands work.
func DefaultWritableOutside() []string {
	home, _ := os.UserHomeDir()
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	if home != "" {
		add(filepath.Join(home, ".cache"))
	}
	if cache, err := os.UserCacheDir(); err == nil {
		add(cache) // ~/Library/Caches on macOS, $XDG_CACHE_HOME elsewhere
	}
	add(os.Getenv("GOCACHE"))
	add(os.Getenv("GOMODCACHE"))
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, p := range filepath.SplitList(gp) {
			add(filepath.Join(p, "pkg", "mod"))
		}
	} else if home != "" {
		add(filepath.Join(home, "go", "pkg", "mod"))
	}
	add(os.Getenv("npm_config_cache"))
	if home != "" {
		add(filepath.Join(home, ".npm"))
		add(filepath.Join(home, ".local", "share", "pnpm"))
		add(filepath.Join(home, ".yarn"))
		add(filepath.Join(home, ".cache", "pip"))
		if runtime.GOOS == "darwin" {
			add(filepath.Join(home, "Library", "pnpm"))
		}
	}
	return out
}

// LoadConfig reads the sandbox section of orch/config.yaml; a missing file
// gives the defaults.
func LoadConfig(orch string) (Config, error) {
	path := filepath.Join(orch, "config.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(path, data)
}

// ParseConfig reads the sandbox section of a config.yaml's content; other
// sections are left to their readers.
func ParseConfig(path string, data []byte) (Config, error) {
	var doc struct {
		Sandbox yaml.Node `yaml:"sandbox"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Sandbox.Kind == 0 {
		return Config{}, nil
	}
	var s struct {
		WritableOutside *[]string `yaml:"writable_outside"`
		AllowUnconfined *bool     `yaml:"allow_unconfined"`
	}
	dec := &doc.Sandbox
	if dec.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("%s:%d: sandbox must be a mapping (writable_outside, allow_unconfined)", path, dec.Line)
	}
	for i := 0; i+1 < len(dec.Content); i += 2 {
		switch k := dec.Content[i].Value; k {
		case "writable_outside", "allow_unconfined":
		default:
			return Config{}, fmt.Errorf("%s:%d: sandbox.%s is not a setting; use writable_outside or allow_unconfined", path, dec.Content[i].Line, k)
		}
	}
	if err := dec.Decode(&s); err != nil {
		return Config{}, fmt.Errorf("%s:%d: sandbox: %w", path, dec.Line, err)
	}
	var c Config
	if s.AllowUnconfined != nil {
		c.AllowUnconfined = *s.AllowUnconfined
	}
	if s.WritableOutside != nil {
		c.WritableOutside = []string{}
		home, _ := os.UserHomeDir()
		for _, p := range *s.WritableOutside {
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				if home == "" {
					return Config{}, fmt.Errorf("%s: sandbox.writable_outside: %q names the home directory, which is unknown here", path, p)
				}
				p = filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
			case !filepath.IsAbs(p):
				return Config{}, fmt.Errorf("%s: sandbox.writable_outside: %q must be absolute or start with ~/", path, p)
			}
			if filepath.Clean(p) == "/" || (home != "" && filepath.Clean(p) == filepath.Clean(home)) {
				return Config{}, fmt.Errorf("%s: sandbox.writable_outside: %q would make every file of the user writable; name the cache directories instead", path, p)
			}
			c.WritableOutside = append(c.WritableOutside, filepath.Clean(p))
		}
	}
	return c, nil
}

// writableOutside are the configured (or default) directories that exist,
// resolved.
func (c Config) writableOutside() []string {
	list := c.WritableOutside
	if list == nil {
		list = DefaultWritableOutside()
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range list {
		if _, err := os.Stat(p); err != nil {
			continue // a cache that does not exist yet stays unwritable
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	return outermost(out)
}
