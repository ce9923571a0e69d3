package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUninstallRestoresBytes: for every agent and settings files laid out
// the ways people lay them out (tabs, CRLF, comments where the agent allows
// them, their own key order, with or without a final newline, or no file at
// all), install then uninstall leaves every file exactly as it was, and
// removes what was not there.
func TestUninstallRestoresBytes(t *testing.T) {
	t.Parallel()
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	mcp := "{\n\t\"mcpServers\": {\n\t\t\"github\": {\"command\": \"gh-mcp\"}\n\t}\n}"
	claude := `{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]},"permissions":{"allow":["Bash(ls)"]}}`
	gemini := "// my settings\n{\n  /* look */\n  \"theme\": \"GitHub\", // dark later\n  \"hooks\": {\n    // mine\n    \"AfterAgent\": [{\"hooks\": [{\"name\": \"log\", \"type\": \"command\", \"command\": \"log.sh\"}]}]\n  },\n  \"general\": {\"vimMode\": true}\n}\n"
	toml := "# my codex config\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n"
	cursor := "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"./done.sh\"}]}}"
	cases := []struct {
		name, agent string
		files       map[string]string
	}{
		{"claude-code absent", "claude-code", nil},
		{"claude-code one line, no newline", "claude-code", map[string]string{".claude/settings.json": claude, ".mcp.json": mcp}},
		{"claude-code CRLF", "claude-code", map[string]string{".claude/settings.json": crlf(userClaudeSettings), ".mcp.json": crlf(mcp + "\n")}},
		{"claude-code empty object", "claude-code", map[string]string{".claude/settings.json": "{}", ".mcp.json": "{ }\n"}},
		{"codex absent", "codex", nil},
		{"codex TOML CRLF, hooks tabs", "codex", map[string]string{".codex/config.toml": crlf(toml), ".codex/hooks.json": "{\n\t\"hooks\": {}\n}"}},
		{"codex TOML without final newline", "codex", map[string]string{".codex/config.toml": strings.TrimSuffix(toml, "\n")}},
		{"gemini absent", "gemini", nil},
		{"gemini comments", "gemini", map[string]string{".gemini/settings.json": gemini}},
		{"gemini comments CRLF", "gemini", map[string]string{".gemini/settings.json": crlf(gemini)}},
		{"gemini tabs no newline", "gemini", map[string]string{".gemini/settings.json": "{\n\t\"theme\": \"GitHub\"\n}"}},
		{"cursor absent", "cursor", nil},
		{"cursor one line", "cursor", map[string]string{".cursor/hooks.json": cursor, ".cursor/mcp.json": mcp}},
		{"cursor CRLF", "cursor", map[string]string{".cursor/hooks.json": crlf("{\n    \"hooks\": {},\n    \"version\": 1\n}\n")}},
		{"cline absent", "cline", nil},
		{"cline rules of the person's", "cline", map[string]string{".clinerules/style.md": "Use tabs.\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			for rel, content := range tc.files {
				p := filepath.Join(ws, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			home := t.TempDir()
			if tc.agent == "codex" {
				// The user's own Codex config, which --trust extends.
				os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
				os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(crlf("model = \"o4\"\n[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"")), 0o600)
			}
			cli := func(args ...string) {
				t.Helper()
				if tc.agent == "codex" && args[0] == "install" {
					args = append(args, "--trust")
				}
				if out, err := runCLI(t, home, args...); err != nil {
					t.Fatalf("%v: %v\n%s", args, err, out)
				}
			}
			before, homeBefore := tree(t, ws), tree(t, home)
			cli("install", tc.agent, "-w", ws)
			installed := tree(t, ws)
			if len(installed) == len(before) {
				t.Fatalf("install changed nothing: %v", installed)
			}
			// A second install changes nothing, and uninstall still restores.
			cli("install", tc.agent, "-w", ws)
			sameTree(t, "second install", installed, tree(t, ws))
			cli("uninstall", tc.agent, "-w", ws)
			sameTree(t, "install then uninstall", before, tree(t, ws))
			sameTree(t, "the home directory after install then uninstall", homeBefore, tree(t, home))
		})
	}
}
