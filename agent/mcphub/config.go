// Package mcphub connects intentgate's agent to the MCP servers a person has
// configured the way Roo Code configures them (.roo/mcp.json in the project,
// and a global settings file), and offers their tools and resources to the
// model as the tools use_mcp_tool and access_mcp_resource, governed like
// every other tool.
package mcphub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// ProjectConfig is the project's settings file, relative to the workspace.
const ProjectConfig = ".roo/mcp.json"

// ServerConfig is one entry of "mcpServers", in Roo Code's shape.
type ServerConfig struct {
	// Type is "stdio" (the default with a command), "streamable-http" or
	// "sse" (the default with a url).
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout is how long one call may take, in seconds (Roo Code's
	// default, 60, when 0).
	Timeout     int      `json:"timeout,omitempty"`
	Disabled    bool     `json:"disabled,omitempty"`
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	// DisabledTools are hidden from the model and refused.
	DisabledTools []string `json:"disabledTools,omitempty"`
	// WatchPaths is accepted for Roo Code's sake (it restarts the server
	// when they change); intentgate starts servers afresh per process.
	WatchPaths []string `json:"watchPaths,omitempty"`

	// Source is the file the entry came from.
	Source string `json:"-"`
}

// Config is the servers of a workspace: the global file's, then the
// project's, which replace global entries of the same name, as in Roo Code.
type Config struct {
	Servers map[string]ServerConfig
}

// Names returns the server names, sorted.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefaultGlobalConfig is the user's global settings file:
// intentgate/mcp_settings.json in the user's configuration directory.
func DefaultGlobalConfig() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "intentgate", "mcp_settings.json")
}

// LoadConfig reads the global file (if global is not "" and the file
// exists) and the workspace's .roo/mcp.json (if it exists). A file that
// exists but is wrong is an error naming the file, the line and the fix.
func LoadConfig(workspace, global string) (*Config, error) {
	c := &Config{Servers: map[string]ServerConfig{}}
	for _, p := range []string{global, filepath.Join(workspace, filepath.FromSlash(ProjectConfig))} {
		if p == "" {
			continue
		}
		servers, err := loadFile(p)
		if err != nil {
			return nil, err
		}
		for name, s := range servers {
			c.Servers[name] = s
		}
	}
	return c, nil
}

// maxConfig bounds a settings file; a real one is a few kilobytes.
const maxConfig = 1 << 20

// serverName compiles on first use: its {0,63} makes a large program, and
// most processes (a hook answering one event) never load MCP settings.
var serverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

func loadFile(path string) (map[string]ServerConfig, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxConfig {
		return nil, fmt.Errorf("%s: not a regular file under 1 MiB", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, b)
}

// ParseConfig decodes one settings file's bytes; path names it in errors.
func ParseConfig(path string, b []byte) (map[string]ServerConfig, error) {
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonErr(b, err))
	}
	out := map[string]ServerConfig{}
	for name, raw := range doc.Servers {
		where := fmt.Sprintf("%s: server %q", path, name)
		if !serverName().MatchString(name) {
			return nil, fmt.Errorf("%s: the name must be letters, digits, '.', '_' or '-' (at most 64)", where)
		}
		var s ServerConfig
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			line := lineOf(b, bytes.Index(b, raw))
			return nil, fmt.Errorf("%s (line %d): %v; the fields are type, command, args, env, cwd, url, headers, timeout, disabled, alwaysAllow, disabledTools, watchPaths", where, line, err)
		}
		s.Source = path
		if err := s.check(); err != nil {
			line := lineOf(b, bytes.Index(b, raw))
			return nil, fmt.Errorf("%s (line %d): %v", where, line, err)
		}
		out[name] = s
	}
	return out, nil
}

func (s *ServerConfig) check() error {
	switch {
	case s.Command != "" && s.URL != "":
		return errors.New(`give either "command" (a local server) or "url" (a remote one), not both`)
	case s.Command == "" && s.URL == "":
		return errors.New(`give "command" for a local server or "url" for a remote one`)
	}
	switch s.Type {
	case "":
		s.Type = "stdio"
		if s.URL != "" {
			s.Type = "streamable-http"
		}
	case "stdio":
		if s.Command == "" {
			return errors.New(`type "stdio" needs "command"`)
		}
	case "streamable-http", "sse":
		if s.URL == "" {
			return fmt.Errorf(`type %q needs "url"`, s.Type)
		}
	default:
		return fmt.Errorf(`type %q is not one of stdio, streamable-http, sse`, s.Type)
	}
	if s.Timeout < 0 || s.Timeout > 3600 {
		return fmt.Errorf("timeout %d is not between 1 and 3600 seconds", s.Timeout)
	}
	return nil
}

// CallTimeout is the server's limit for one call.
func (s ServerConfig) CallTimeout() time.Duration {
	if s.Timeout == 0 {
		return 60 * time.Second
	}
	return time.Duration(s.Timeout) * time.Second
}

// envRef is Roo Code's ${env:NAME} reference in settings values.
var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`) })

func expandEnv(s string) string {
	return envRef().ReplaceAllStringFunc(s, func(m string) string {
		return os.Getenv(envRef().FindStringSubmatch(m)[1])
	})
}

func jsonErr(b []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %v; the file must be JSON: {\"mcpServers\": {\"NAME\": {\"command\": ...}}}", lineOf(b, int(se.Offset)), err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("line %d: %q must be %s; the file must be {\"mcpServers\": {\"NAME\": {\"command\": ...}}}", lineOf(b, int(te.Offset)), te.Field, te.Type)
	}
	return err.Error()
}

func lineOf(b []byte, off int) int {
	if off < 0 {
		return 0
	}
	if off > len(b) {
		off = len(b)
	}
	return bytes.Count(b[:off], []byte("\n")) + 1
}

func (s ServerConfig) alwaysAllowed(tool string) bool {
	for _, t := range s.AlwaysAllow {
		if t == tool || t == "*" {
			return true
		}
	}
	return false
}

func (s ServerConfig) toolDisabled(tool string) bool {
	for _, t := range s.DisabledTools {
		if t == tool {
			return true
		}
	}
	return false
}

// describe is how the server appears in the system prompt.
func (s ServerConfig) describe() string {
	if s.Command != "" {
		return strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
	}
	return s.URL
}
