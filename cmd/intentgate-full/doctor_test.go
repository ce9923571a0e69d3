package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctor(t *testing.T) {
	bin := e2eBinary(t)
	ws := e2eWorkspace(t, e2eIntents, nil)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(fmt.Sprintf(`{%q:"TRUST_FOLDER"}`, ws)), 0o644)
	run := func(path string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	withBin := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	if out, err := run(withBin, "doctor", "gemini", "-w", ws); err == nil || !strings.Contains(out, "no intentgate hook in .gemini/settings.json") {
		t.Errorf("doctor before install: %v\n%s", err, out)
	}
	if out, err := run(withBin, "install", "gemini", "-w", ws); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	out, err := run(withBin, "doctor", "gemini", "-w", ws)
	if err != nil || !strings.Contains(out, "refuses a write to .orchestration/") {
		t.Errorf("doctor after install: %v\n%s", err, out)
	}
	// A hook taken out, hooks switched off by the user: doctor names both.
	settings := filepath.Join(ws, ".gemini", "settings.json")
	b, _ := os.ReadFile(settings)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["hooks"].(map[string]any), "AfterTool")
	b, _ = json.Marshal(doc)
	os.WriteFile(settings, b, 0o644)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"hooksConfig": {"disabled": ["intentgate"]}}`), 0o644)
	out, err = run(withBin, "doctor", "gemini", "-w", ws)
	if err == nil || !strings.Contains(out, "no intentgate hook for AfterTool") || !strings.Contains(out, `hooksConfig.disabled names "intentgate"`) {
		t.Errorf("doctor with AfterTool removed and the hook disabled by the user: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(home, ".gemini", "settings.json"))
	if out, err := run(withBin, "install", "gemini", "-w", ws); err != nil {
		t.Fatalf("install again: %v\n%s", err, out)
	}
	if out, err := run(withBin, "doctor", "gemini", "-w", ws); err != nil {
		t.Errorf("doctor after installing again: %v\n%s", err, out)
	}
	// The hook command gone from PATH: the agent would run ungoverned.
	out, err = run(t.TempDir(), "doctor", "gemini", "-w", ws)
	if err == nil || !strings.Contains(out, "is not found") {
		t.Errorf("doctor without intentgate on PATH: %v\n%s", err, out)
	}
	// Codex skips an untrusted project's hooks: install refuses to leave it
	// ungoverned and names the command that records the trust.
	out, err = run(withBin, "install", "codex", "-w", ws)
	if err == nil || !strings.Contains(out, "intentgate install codex --trust -w "+ws) {
		t.Errorf("install codex without trust: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".codex", "hooks.json")); !os.IsNotExist(err) {
		t.Errorf("install codex without trust wrote .codex/hooks.json (%v)", err)
	}
	if out, err := run(withBin, "install", "codex", "--trust", "-w", ws); err != nil {
		t.Fatalf("install codex --trust: %v\n%s", err, out)
	}
	cfg, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if !strings.Contains(string(cfg), fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", ws)) {
		t.Errorf("~/.codex/config.toml after --trust:\n%s", cfg)
	}
	// The project is trusted; the hooks themselves still need trusting in
	// codex (/hooks), and doctor says so.
	out, err = run(withBin, "doctor", "codex", "-w", ws)
	if err == nil || strings.Contains(out, "not trusted in") || !strings.Contains(out, "/hooks") || strings.Contains(out, "sandbox_mode") {
		t.Errorf("doctor codex with project trust only: %v\n%s", err, out)
	}
	// The person turns Codex's sandbox off in the project: doctor says so.
	cfgPath := filepath.Join(ws, ".codex", "config.toml")
	c, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(strings.Replace(string(c), `sandbox_mode = "workspace-write"`, `sandbox_mode = "danger-full-access"`, 1)), 0o644)
	out, _ = run(withBin, "doctor", "codex", "-w", ws)
	if !strings.Contains(out, `sandbox_mode = "danger-full-access"`) {
		t.Errorf("doctor codex with the sandbox off: %s", out)
	}
	os.WriteFile(cfgPath, c, 0o644)
	if out, err := run(withBin, "uninstall", "codex", "-w", ws); err != nil {
		t.Fatalf("uninstall codex: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "config.toml")); !os.IsNotExist(err) {
		t.Errorf("uninstall left ~/.codex/config.toml, which install created (%v)", err)
	}
}
