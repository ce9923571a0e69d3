package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// The ledger attacks of issue 9, each done as a hostile agent with a shell
// would do it, and each judged by `intentgate trace verify` through the real
// binary: NOT INTACT (exit 1) every time.

// ledgerAtkWorkspace is a git workspace whose ledger holds, in order: a
// write, a refusal (the record an attacker wants gone) and two more writes.
func ledgerAtkWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required")
		}
		t.Skip("no git")
	}
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "test/model", selectCall,
		writeCall("src/a.txt", "a\n"), "!"+writeCall("docs/x.md", "out of scope\n"),
		writeCall("src/b.txt", "b\n"), writeCall("src/c.txt", "c\n"))
	return ws
}

func ledgerAtkPath(ws string) string { return filepath.Join(ws, ".orchestration", "agent_trace.jsonl") }

func ledgerAtkRead(t *testing.T, ws string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(ledgerAtkPath(ws))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func ledgerAtkWrite(t *testing.T, ws string, lines [][]byte) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		b = append(b, bytes.TrimSuffix(l, []byte("\n"))...)
		b = append(b, '\n')
	}
	if err := os.WriteFile(ledgerAtkPath(ws), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ledgerAtkRechain relinks every line to the one before it, as an attacker
// who knows the chain rule recomputes it after dropping a record.
func ledgerAtkRechain(t *testing.T, lines [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for _, l := range lines {
		rec, err := orchestration.ParseRecord(bytes.TrimSuffix(l, []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		rec.Meta.Prev = prev
		b, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
		if err != nil {
			t.Fatal(err)
		}
		prev = orchestration.LineLink(b)
		out = append(out, b)
	}
	return out
}

// ledgerAtkForge is a valid record for path, linked after line `after`.
func ledgerAtkForge(t *testing.T, lines [][]byte, after int, path string) []byte {
	t.Helper()
	rec, err := orchestration.ParseRecord(bytes.TrimSuffix(lines[0], []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	rec.ID = uuid.Must(uuid.NewV7()).String()
	rec.Files[0].Path = path
	rec.Meta.Prev = ""
	if after > 0 {
		rec.Meta.Prev = orchestration.LineLink(bytes.TrimSuffix(lines[after-1], []byte("\n")))
	}
	b, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dropDenial(t *testing.T, lines [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	dropped := false
	for _, l := range lines {
		if !dropped && bytes.Contains(l, []byte(`"decision":"deny"`)) {
			dropped = true
			continue
		}
		out = append(out, l)
	}
	if !dropped {
		t.Fatal("no refusal record in the ledger")
	}
	return out
}

// igEnv runs the binary in ws's directory with extra environment and
// returns its output and exit status.
func igEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func wantNotIntact(t *testing.T, what, out string, code int, mention string) {
	t.Helper()
	if code != 1 || !strings.Contains(out, "NOT INTACT") {
		t.Fatalf("%s: verify exit %d, want 1 and NOT INTACT:\n%s", what, code, out)
	}
	if mention != "" && !strings.Contains(out, mention) {
		t.Errorf("%s: verify does not say %q:\n%s", what, mention, out)
	}
}

func TestLedgerAttacks(t *testing.T) {
	t.Run("fork inserted with a valid prev", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		lines := ledgerAtkRead(t, ws)
		forged := ledgerAtkForge(t, lines, 2, "src/forged.txt")
		ledgerAtkWrite(t, ws, append(append(append([][]byte{}, lines[:2]...), forged), lines[2:]...))
		out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "insertion", out, code, "no git merge")
	})

	t.Run("record appended as a new chain", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		lines := ledgerAtkRead(t, ws)
		ledgerAtkWrite(t, ws, append(lines, ledgerAtkForge(t, lines, 0, "src/forged.txt")))
		out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "new chain", out, code, "starts a new chain")
	})

	t.Run("checkpoint ref deleted, refusal dropped, chain recomputed", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		if out, code := igEnv(t, nil, "trace", "seal", "-w", ws); code != 0 {
			t.Fatalf("seal: %d\n%s", code, out)
		}
		gitIn(t, ws, "update-ref", "-d", "refs/intentgate/checkpoints")
		ledgerAtkWrite(t, ws, ledgerAtkRechain(t, dropDenial(t, ledgerAtkRead(t, ws))))
		out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "deleted ref", out, code, "is no longer on refs/intentgate/checkpoints")
	})

	t.Run("checkpoint ref moved back", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		igEnv(t, nil, "trace", "seal", "-w", ws)
		first := gitIn(t, ws, "rev-parse", "refs/intentgate/checkpoints")
		traceDispatch(t, ws, "s2", "test/model", selectCall, "!"+writeCall("docs/y.md", "no\n"), writeCall("src/d.txt", "d\n"))
		if out, code := igEnv(t, nil, "trace", "seal", "-w", ws); code != 0 {
			t.Fatalf("second seal: %d\n%s", code, out)
		}
		gitIn(t, ws, "update-ref", "refs/intentgate/checkpoints", first)
		lines := ledgerAtkRead(t, ws)
		// Drop the second session's refusal (after the first seal).
		var kept [][]byte
		for _, l := range lines {
			if !bytes.Contains(l, []byte(`docs/y.md`)) {
				kept = append(kept, l)
			}
		}
		ledgerAtkWrite(t, ws, ledgerAtkRechain(t, kept))
		out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "ref moved back", out, code, "deleted or moved back")
	})

	t.Run("pushed checkpoint is the anchor", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		bare := t.TempDir()
		gitIn(t, bare, "init", "-q", "--bare")
		gitIn(t, ws, "remote", "add", "origin", bare)
		if out, code := igEnv(t, nil, "trace", "seal", "-w", ws, "--push"); code != 0 || !strings.Contains(out, "pushed") {
			t.Fatalf("seal --push: %d\n%s", code, out)
		}
		if got := gitIn(t, bare, "rev-parse", "refs/intentgate/checkpoints"); got != gitIn(t, ws, "rev-parse", "refs/intentgate/checkpoints") {
			t.Fatalf("the remote holds %s", got)
		}
		if out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift"); code != 0 || !strings.Contains(out, "remote origin") {
			t.Fatalf("verify with the remote: %d\n%s", code, out)
		}
		// Everything on this machine is rewritten: the local ref is gone,
		// and the verify runs with an empty anchor directory (another
		// machine, or an agent that wiped the user's one).
		gitIn(t, ws, "update-ref", "-d", "refs/intentgate/checkpoints")
		gitIn(t, ws, "update-ref", "-d", "refs/intentgate/remotes/origin/checkpoints")
		ledgerAtkWrite(t, ws, ledgerAtkRechain(t, dropDenial(t, ledgerAtkRead(t, ws))))
		fresh := []string{orchestration.AnchorDirEnv + "=" + t.TempDir()}
		if out, code := igEnv(t, fresh, "trace", "verify", "-w", ws, "--no-drift", "--no-remote"); code != 0 {
			t.Fatalf("without the anchors the rewrite passes (this is what the remote is for), got %d:\n%s", code, out)
		}
		out, code := igEnv(t, fresh, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "rewritten after a push", out, code, "checkpoint")
	})

	t.Run("last line deleted, forged records imported", func(t *testing.T) {
		ws := ledgerAtkWorkspace(t)
		igEnv(t, nil, "trace", "seal", "-w", ws)
		lines := ledgerAtkRead(t, ws)
		ledgerAtkWrite(t, ws, lines[:len(lines)-1])
		forged := filepath.Join(t.TempDir(), "forged.jsonl")
		if err := os.WriteFile(forged, append(ledgerAtkForge(t, lines, 0, "src/c.txt"), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(ledgerAtkPath(ws))
		if out, code := igEnv(t, nil, "trace", "import", "-w", ws, forged); code == 0 {
			t.Fatalf("import after a cut-back tail succeeded:\n%s", out)
		}
		if after, _ := os.ReadFile(ledgerAtkPath(ws)); !bytes.Equal(before, after) {
			t.Fatal("the refused import changed the ledger")
		}
		out, code := igEnv(t, nil, "trace", "verify", "-w", ws, "--no-drift")
		wantNotIntact(t, "cut-back tail", out, code, "truncat")
	})
}

// faultLedgerLines returns the ledger's lines.
func faultLedgerLines(t *testing.T, ws string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
