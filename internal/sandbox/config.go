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
//	  # allow (the default) or deny: with deny, commands run in a network
//	  # namespace of their own with only a loopback interface (Linux), or
//	  # under a Seatbelt profile that refuses the network (macOS).
//	  network: allow
//
// The file is a governance file: no command can change it.
type Config struct {
	// WritableOutside replaces DefaultWritableOutside when set.
	WritableOutside []string
	AllowUnconfined bool
	// Network is NetworkAllow (the default, "") or NetworkDeny.
	Network string
}

// The values of sandbox.network. The default is allow: the commands an agent
// runs most (go test, npm install, pip install, git fetch) fetch packages,
// and a sandbox that breaks them is turned off. What a confined command could
// do with the network against intentgate itself (post forged hook events to
// the daemon) is refused by the daemon, which answers no process of another
// PID namespace; a team that also wants no exfiltration sets deny.
const (
	NetworkAllow = "allow"
	NetworkDeny  = "deny"
)

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
		Network         *string   `yaml:"network"`
	}
	dec := &doc.Sandbox
	if dec.Kind != yaml.MappingNode {
		return Config{}, fmt.Errorf("%s:%d: sandbox must be a mapping (writable_outside, allow_unconfined, network)", path, dec.Line)
	}
	for i := 0; i+1 < len(dec.Content); i += 2 {
		switch k := dec.Content[i].Value; k {
		case "writable_outside", "allow_unconfined", "network":
		default:
			return Config{}, fmt.Errorf("%s:%d: sandbox.%s is not a setting; use writable_outside, allow_unconfined or network", path, dec.Content[i].Line, k)
		}
	}
	if err := dec.Decode(&s); err != nil {
		return Config{}, fmt.Errorf("%s:%d: sandbox: %w", path, dec.Line, err)
	}
	var c Config
	if s.Network != nil {
		switch *s.Network {
		case NetworkAllow, NetworkDeny:
			c.Network = *s.Network
		default:
			line := dec.Line
			for i := 0; i+1 < len(dec.Content); i += 2 {
				if dec.Content[i].Value == "network" {
					line = dec.Content[i+1].Line
				}
			}
			return Config{}, fmt.Errorf("%s:%d: sandbox.network is %q; use allow or deny", path, line, *s.Network)
		}
	}
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
