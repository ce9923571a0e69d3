package main

import (
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
	// The hook command gone from PATH: the agent would run ungoverned.
	out, err = run(t.TempDir(), "doctor", "gemini", "-w", ws)
	if err == nil || !strings.Contains(out, "is not found") {
		t.Errorf("doctor without intentgate on PATH: %v\n%s", err, out)
	}
	// Codex: the hooks are there but nothing says they are trusted.
	run(withBin, "install", "codex", "-w", ws)
	out, err = run(withBin, "doctor", "codex", "-w", ws)
	if err == nil || !strings.Contains(out, "not trusted") || !strings.Contains(out, "/hooks") {
		t.Errorf("doctor codex without trust: %v\n%s", err, out)
	}
}
