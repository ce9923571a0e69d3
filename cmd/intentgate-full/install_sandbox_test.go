package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// codexSandboxBlock is what install puts at the top of .codex/config.toml,
// written out by hand.
const codexSandboxBlock = "# >>> intentgate sandbox (added by `intentgate install codex`; `intentgate uninstall codex` removes this block)\n" +
	"sandbox_mode = \"workspace-write\"\n" +
	"approval_policy = \"never\"\n" +
	"# <<< intentgate sandbox\n\n"

// TestInstallCodexSandbox: install turns Codex's own sandbox on in the
// project's config.toml as top-level keys (which Codex reads as such, not as
// part of a table), says what it cannot guarantee, leaves the person's own
// choices alone, and uninstall gives back every byte.
func TestInstallCodexSandbox(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, before string
		want         map[string]string // top-level keys after install
		note         string
	}{
		{name: "fresh", want: map[string]string{"sandbox_mode": "workspace-write", "approval_policy": "never"}},
		{name: "tables first", before: "[profiles.fast]\nmodel = \"m\"\n\n[sandbox_workspace_write]\nnetwork_access = true\n",
			want: map[string]string{"sandbox_mode": "workspace-write", "approval_policy": "never"}},
		{name: "own mode", before: "# mine\nsandbox_mode = \"danger-full-access\"\n",
			want: map[string]string{"sandbox_mode": "danger-full-access", "approval_policy": "never"},
			note: `sets sandbox_mode = "danger-full-access" itself`},
		{name: "profile", before: "default_permissions = \"dev\"\n\n[permissions.dev.filesystem]\n\":minimal\" = \"read\"\n",
			want: map[string]string{"default_permissions": "dev", "approval_policy": "never"},
			note: "a permission profile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			cfg := filepath.Join(ws, ".codex", "config.toml")
			if c.before != "" {
				os.MkdirAll(filepath.Dir(cfg), 0o755)
				os.WriteFile(cfg, []byte(c.before), 0o644)
			}
			original := tree(t, ws)
			out := mustCLI(t, "install", "codex", "-w", ws)
			got, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := toml.Unmarshal(got, &doc); err != nil {
				t.Fatalf("config.toml after install does not parse: %v\n%s", err, got)
			}
			for k, v := range c.want {
				if s, _ := doc[k].(string); s != v {
					t.Errorf("%s = %v, want %q:\n%s", k, doc[k], v, got)
				}
			}
			if c.name == "profile" {
				if _, ok := doc["sandbox_mode"]; ok {
					t.Errorf("sandbox_mode written beside a permission profile:\n%s", got)
				}
			}
			if _, ok := doc["mcp_servers"].(map[string]any)["intentgate"]; !ok {
				t.Errorf("no intentgate MCP server:\n%s", got)
			}
			if !strings.Contains(out, "not guaranteed") || (c.note != "" && !strings.Contains(out, c.note)) {
				t.Errorf("install said:\n%s\nwant what it cannot guarantee (and %q)", out, c.note)
			}
			if again := mustCLI(t, "install", "codex", "-w", ws); strings.Contains(again, "updated") {
				t.Errorf("second install changed something: %q", again)
			}
			mustCLI(t, "uninstall", "codex", "-w", ws)
			sameTree(t, "after uninstall", original, tree(t, ws))
		})
	}
}

// TestInstallGeminiHooksOn: install turns Gemini's hook system on for the
// project (the user's settings may turn it off), refuses a project file that
// turns it off, and uninstall gives back every byte.
func TestInstallGeminiHooksOn(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	p := filepath.Join(ws, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	settings := "{\n  \"hooksConfig\": {\n    \"notifications\": false\n  }\n}\n"
	os.WriteFile(p, []byte(settings), 0o644)
	out := mustCLI(t, "install", "gemini", "-w", ws)
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "\"enabled\": true") || !strings.Contains(string(b), "\"notifications\": false") {
		t.Errorf("settings.json after install:\n%s", b)
	}
	if !strings.Contains(out, "intentgate exec") || !strings.Contains(out, "not guaranteed") {
		t.Errorf("install said:\n%s", out)
	}
	mustCLI(t, "uninstall", "gemini", "-w", ws)
	if b, _ := os.ReadFile(p); string(b) != settings {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", b, settings)
	}

	off := "{\"hooksConfig\": {\"enabled\": false}}\n"
	os.WriteFile(p, []byte(off), 0o644)
	if out, err := runCLI(t, "", "install", "gemini", "-w", ws); err == nil || !strings.Contains(out, "hooksConfig") {
		t.Errorf("hooks turned off in the project: %v %q, want a refusal naming hooksConfig", err, out)
	}
	if b, _ := os.ReadFile(p); string(b) != off {
		t.Errorf("install changed a file it refused: %q", b)
	}
}
