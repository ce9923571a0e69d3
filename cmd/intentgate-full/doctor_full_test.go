package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorChecksFull: hooks installed with the lean intentgate on PATH;
// doctor says intentgate-full is beside it from the same build, names it
// when it is missing (hooks still answer) and when it comes from another
// build (here other linker flags, as a version set at build time), and is
// content again once both come from one build.
func TestDoctorChecksFull(t *testing.T) {
	dir := t.TempDir()
	bin, err := buildInstall(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := e2eWorkspace(t, e2eIntents, nil)
	home := t.TempDir()
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	run := func(prog string, args ...string) (string, error) {
		cmd := exec.Command(prog, args...)
		cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(bin, "install", "claude-code", "-w", ws); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	full := filepath.Join(dir, "intentgate-full")
	out, err := run(bin, "doctor", "claude-code", "-w", ws)
	if err != nil || !strings.Contains(out, full+" beside it, from the same build") {
		t.Fatalf("doctor with both programs of one build: %v\n%s", err, out)
	}

	// intentgate-full gone: doctor (run by a copy of intentgate-full kept
	// elsewhere) names the missing file and the fix.
	keep := filepath.Join(t.TempDir(), "intentgate-full")
	if err := os.Rename(full, keep); err != nil {
		t.Fatal(err)
	}
	out, err = run(keep, "doctor", "claude-code", "-w", ws)
	if err == nil || !strings.Contains(out, full+" is missing beside "+bin) || !strings.Contains(out, "go install ./cmd/...") {
		t.Errorf("doctor without intentgate-full: %v\n%s", err, out)
	}

	// intentgate-full from another build.
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.9.9-other", "-o", full, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err = run(bin, "doctor", "claude-code", "-w", ws)
	if err == nil || !strings.Contains(out, "come from different builds") || !strings.Contains(out, "9.9.9-other") {
		t.Errorf("doctor with intentgate-full of another build: %v\n%s", err, out)
	}

	// One build again.
	if out, err := exec.Command("go", "build", "-o", full, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := run(bin, "doctor", "claude-code", "-w", ws); err != nil || !strings.Contains(out, "from the same build") {
		t.Errorf("doctor after rebuilding intentgate-full: %v\n%s", err, out)
	}
}
