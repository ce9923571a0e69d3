//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// TestCrashBetweenWriteAndDerived kills a dispatch process (SIGKILL) at
// random points of a stream of writes, so that some kills fall between a
// write and the files derived from it (the session's read hashes, the intent
// map and its summary, blame snapshots), which are written without fsync.
// After each kill a person changes the file; then a new process for the same
// session must refuse to overwrite it (a lost or stale read hash means
// NOT_READ or STALE_FILE, never an allow), must allow it after a read, and
// intent_map.md must then be what the ledger renders.
func TestCrashBetweenWriteAndDerived(t *testing.T) {
	e := newAtkEnv(t, atkOpts{})
	e.write("src/a.txt", "start\n")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	for round := range 6 {
		// A writer that is killed mid-stream.
		cmd := exec.Command(atkBin, "dispatch", "--workspace", e.ws, "--agent", "crash-test", "--model", "test/model")
		cmd.Env = e.gitEnv()
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		answers := bufio.NewReader(stdout)
		send := func(id, tool string, args map[string]any) {
			line, _ := json.Marshal(map[string]any{"id": id, "session": "s", "tool": tool, "args": args})
			stdin.Write(append(line, '\n'))
		}
		send("sel", "select_active_intent", map[string]any{"intent_id": "INT-001"})
		send("read", "read_file", map[string]any{"path": "src/a.txt"})
		// Wait until the first answers are in, so the kill hits writes.
		for range 2 {
			if _, err := answers.ReadBytes('\n'); err != nil {
				t.Fatalf("round %d: no answer before the kill: %v", round, err)
			}
		}
		go func() {
			for i := 0; ; i++ {
				line, _ := json.Marshal(map[string]any{"id": fmt.Sprint("w", i), "session": "s", "tool": "write_to_file",
					"args": map[string]any{"path": "src/a.txt", "content": fmt.Sprintf("round %d write %d\n", round, i)}})
				if _, err := stdin.Write(append(line, '\n')); err != nil {
					return
				}
			}
		}()
		go io.Copy(io.Discard, answers)
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		// Someone else changes the file the session may have seen.
		e.write("src/a.txt", fmt.Sprintf("changed by a person after round %d\n", round))

		p := e.start()
		res := p.send("write_to_file", map[string]any{"path": "src/a.txt", "content": "overwrite unseen\n"})
		if c := atkCode(res); c != engine.NotRead && c != engine.StaleFile {
			t.Fatalf("round %d: overwriting a change the session never saw: %s, want NOT_READ or STALE_FILE", round, atkDescribe(res))
		}
		if res := p.send("read_file", map[string]any{"path": "src/a.txt"}); !res.OK {
			t.Fatalf("round %d: read: %s", round, atkDescribe(res))
		}
		if res := p.send("write_to_file", map[string]any{"path": "src/a.txt", "content": fmt.Sprintf("after round %d\n", round)}); !res.OK {
			t.Fatalf("round %d: write after a read: %s", round, atkDescribe(res))
		}
		p.close()
		if got, err := os.ReadFile(e.abs("src/a.txt")); err != nil || string(got) != fmt.Sprintf("after round %d\n", round) {
			t.Fatalf("round %d: src/a.txt = %q, %v", round, got, err)
		}
		checkMapIsLedgers(t, e, round)
	}
}

// checkMapIsLedgers compares intent_map.md with the map rebuilt from the
// ledger alone, in a copy of .orchestration.
func checkMapIsLedgers(t *testing.T, e *atkEnv, round int) {
	t.Helper()
	orch := filepath.Join(e.wsReal, ".orchestration")
	got, err := os.ReadFile(filepath.Join(orch, orchestration.IntentMapName))
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	ledger, err := os.ReadFile(filepath.Join(orch, orchestration.LedgerName))
	if err != nil {
		t.Fatal(err)
	}
	intents, err := orchestration.ParseIntents("active_intents.yaml", []byte(atkIntents))
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), ".orchestration")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	refLedger := filepath.Join(ref, orchestration.LedgerName)
	if err := os.WriteFile(refLedger, ledger, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := orchestration.RebuildIntentMap(ref, intents.Intents, refLedger); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(ref, orchestration.IntentMapName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("round %d: intent_map.md is not what the ledger renders:\n%s\nwant\n%s", round, got, want)
	}
}

// TestDispatchTerminatedWritesItsBatch stops a dispatch process that waits
// for its next call with SIGTERM (and then one with SIGINT), right after a
// read: it must exit at once (it used to wait for its input to end), with
// 128+signal, having written the read hash it batched, so that a new process
// of the same session may write the file it read without reading it again.
func TestDispatchTerminatedWritesItsBatch(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		e := newAtkEnv(t, atkOpts{})
		e.write("src/a.txt", "start\n")
		cmd := exec.Command(atkBin, "dispatch", "--workspace", e.ws, "--agent", "term-test", "--model", "test/model")
		cmd.Env = e.gitEnv()
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		answers := bufio.NewReader(stdout)
		for _, call := range []map[string]any{
			{"id": "sel", "session": "s", "tool": "select_active_intent", "args": map[string]any{"intent_id": "INT-001"}},
			{"id": "read", "session": "s", "tool": "read_file", "args": map[string]any{"path": "src/a.txt"}},
		} {
			line, _ := json.Marshal(call)
			stdin.Write(append(line, '\n'))
			ans, err := answers.ReadBytes('\n')
			if err != nil || !bytes.Contains(ans, []byte(`"ok":true`)) {
				t.Fatalf("%v: %s: %q, %v", c.sig, call["id"], ans, err)
			}
		}
		cmd.Process.Signal(c.sig)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Fatalf("%v: dispatch ended with %v, want exit status %d", c.sig, err, c.code)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: dispatch still waits for its input 20 s after the signal", c.sig)
		}
		p := e.start()
		if res := p.send("write_to_file", map[string]any{"path": "src/a.txt", "content": "after the read\n"}); !res.OK {
			t.Fatalf("%v: the read before the signal was lost: %s", c.sig, atkDescribe(res))
		}
		p.close()
	}
}
