package mcphub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfigProjectOverridesGlobal(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(dir, "global.json")
	os.WriteFile(global, []byte(`{"mcpServers":{"a":{"command":"ga"},"b":{"url":"https://example.com/mcp","headers":{"X":"y"}}}}`), 0o600)
	os.MkdirAll(filepath.Join(dir, ".roo"), 0o755)
	os.WriteFile(filepath.Join(dir, ".roo", "mcp.json"), []byte(`{"mcpServers":{"a":{"command":"pa","args":["x"],"alwaysAllow":["t"],"timeout":5}}}`), 0o600)
	c, err := LoadConfig(dir, global)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Servers["a"], c.Servers["b"]
	if a.Command != "pa" || a.Type != "stdio" || !a.alwaysAllowed("t") || a.alwaysAllowed("u") || a.CallTimeout().Seconds() != 5 {
		t.Errorf("a = %+v", a)
	}
	if b.Type != "streamable-http" || b.Source != global {
		t.Errorf("b = %+v", b)
	}
	if c, err := LoadConfig(t.TempDir(), ""); err != nil || len(c.Servers) != 0 {
		t.Errorf("no files = %+v, %v", c, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"{\n\"mcpServers\": {\n}", "line 3"},
		{`{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`, "not both"},
		{`{"mcpServers":{"a":{}}}`, `give "command"`},
		{`{"mcpServers":{"a":{"command":"x","type":"ws"}}}`, `"ws"`},
		{`{"mcpServers":{"a":{"command":"x","comand":"y"}}}`, "comand"},
		{`{"mcpServers":{"a":{"command":["x"]}}}`, "command"},
		{`{"mcpServers":{"a b":{"command":"x"}}}`, "name"},
		{`{"mcpServers":{"a":{"command":"x","timeout":99999}}}`, "timeout"},
		{`{"mcpServers":{"a":{"type":"sse"}}}`, `"url"`},
	} {
		_, err := ParseConfig("mcp.json", []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mcp.json") {
			t.Errorf("ParseConfig(%s) = %v, want an error naming the file and %s", tc.body, err, tc.want)
		}
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("IG_TEST_TOKEN", "s3cret")
	if got := expandEnv("Bearer ${env:IG_TEST_TOKEN} ${env:IG_TEST_UNSET}$HOME"); got != "Bearer s3cret $HOME" {
		t.Errorf("expandEnv = %q", got)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["y"],"env":{"K":"V"},"alwaysAllow":["t"]}}}`))
	f.Add([]byte(`{"mcpServers":{"b":{"type":"sse","url":"http://h","headers":{"A":"b"}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		servers, err := ParseConfig("f.json", b)
		if err != nil {
			return
		}
		for name, s := range servers {
			if !serverName().MatchString(name) {
				t.Fatalf("accepted name %q", name)
			}
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("accepted %+v", s)
			}
			if s.Type != "stdio" && s.Type != "sse" && s.Type != "streamable-http" {
				t.Fatalf("accepted type %q", s.Type)
			}
		}
	})
}
