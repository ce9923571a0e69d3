package orchestration

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

const testIgnore = "# Secrets and generated code.\r\n" +
	"secrets/\n" +
	"*.pem\n" +
	"/build\n" +
	"docs/generated/**\n" +
	"logs/*.log\n" +
	"!logs/keep.log\n" +
	"vendor/\n" +
	"!vendor/ok.go\n" +
	"\\#literal\n" +
	"\\!bang\n" +
	"   \n" +
	"caf\u00e9/\n" +
	"Config.Local\n"

func TestIgnoreMatch(t *testing.T) {
	ig := ParseIgnore([]byte(testIgnore))
	tests := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"secrets", true, true},
		{"secrets/a/b.txt", false, true},
		{"src/secrets/key", false, true}, // no slash in the pattern: any depth
		{"secrets", false, false},        // "secrets/" names directories only
		{"key.pem", false, true},
		{"deep/dir/key.pem", false, true},
		{"key.pem.txt", false, false},
		{"build/out.o", false, true},
		{"build", true, true},
		{"src/build/out.o", false, false}, // anchored at the root
		{"docs/generated/api.md", false, true},
		{"docs/generated", true, true},
		{"docs/guide.md", false, false},
		{"logs/app.log", false, true},
		{"logs/keep.log", false, false},
		{"vendor/ok.go", false, true}, // a negation cannot undo an excluded parent
		{"#literal", false, true},
		{"!bang", false, true},
		{"bang", false, false},
		{"SECRETS/a.txt", false, true}, // case variants are the same file on macOS and Windows
		{"Key.PEM", false, true},
		{"config.local", false, true},
		{"cafe\u0301/x", false, true}, // NFD spelling of an NFC pattern
		{"src/main.go", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			if got := ig.Match(tt.rel, tt.isDir); got != tt.want {
				t.Errorf("Match(%q, %v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
			}
		})
	}
}

func TestLoadIgnore(t *testing.T) {
	t.Run("missing file ignores nothing", func(t *testing.T) {
		ig, err := LoadIgnore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if ig.Match("anything/at/all", false) {
			t.Error("empty matcher matched")
		}
	})
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".intentignore"), []byte("secrets/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ig, err := LoadIgnore(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !ig.Match("secrets/a/b.txt", false) {
			t.Error("secrets/a/b.txt not ignored")
		}
	})
	t.Run("read error", func(t *testing.T) {
		dir := t.TempDir()
		// A directory in its place cannot be read as a file.
		if err := os.Mkdir(filepath.Join(dir, ".intentignore"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadIgnore(dir); err == nil {
			t.Error("LoadIgnore with an unreadable .intentignore: want error")
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if runtime.GOOS == "windows" || os.Getuid() == 0 {
			t.Skip("permissions do not stop this user")
		}
		dir := t.TempDir()
		p := filepath.Join(dir, ".intentignore")
		if err := os.WriteFile(p, []byte("x\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadIgnore(dir); err == nil {
			t.Error("LoadIgnore with an unreadable .intentignore: want error")
		}
	})
}

func TestIsGoverned(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{".orchestration", true},
		{".orchestration/active_intents.yaml", true},
		{".orchestration/agent_trace.jsonl", true},
		{".Orchestration/agent_trace.jsonl", true},
		{".ORCHESTRATION/sessions/x.json", true},
		{".intentignore", true},
		{".IntentIgnore", true},
		{".git", true},
		{".git/config", true},
		{".GIT/config", true},
		{".git/hooks/pre-commit", true},
		{"vendor/x/.git/hooks/pre-commit", true},
		{"sub/.Git", true},
		{".claude/settings.json", true},
		{".Claude/settings.local.json", true},
		{".codex/config.toml", true},
		{".gemini/settings.json", true},
		{".cursor/hooks.json", true},
		{".clinerules/hooks/PreToolUse", true},
		{".clinerules/Hooks/x", true},
		{".clinerules/hooks", true},
		{".clinerules/style.md", true},
		{".clinerules", true},
		{".cline/settings.json", true}, // Cline reads Claude-style hooks there
		{".mcp.json", true},
		{".MCP.json", true},
		{"src/.mcp.json", false},
		{"./.git/config", true},
		{".orchestration\u200c/x", true}, // HFS+ ignores zero-width non-joiner
		{".g\u200cit/config", true},      // likewise
		{".git./config", true},           // Windows drops trailing dots
		{".git /config", true},           // and trailing spaces
		{".git::$INDEX_ALLOCATION/config", true},
		{"GIT~1/config", true},            // the 8.3 short name of .git
		{`.git\config`, true},             // a backslash is a separator on Windows
		{"src/../.git/config", true},      // not canonical: fail closed
		{".Orchestratio\u0301n/x", false}, // a different name, not a spelling of it
		{"src/main.go", false},
		{"docs/.gitignore", false},
		{".github/workflows/ci.yml", false},
		{".gitignore", false},
		{"src/.orchestration/x", true}, // at every depth: a nested workspace never governs
		{"src/x/.orchestration/active_intents.yaml", true},
		{"src/x/.Orchestration/active_intents.yaml", true},
		{"src/orchestration/x", false},
		{"src/.claude/x", false},
		{"", false},
		{".", false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			if got := IsGoverned(tt.rel); got != tt.want {
				t.Errorf("IsGoverned(%q) = %v, want %v", tt.rel, got, tt.want)
			}
		})
	}
}
