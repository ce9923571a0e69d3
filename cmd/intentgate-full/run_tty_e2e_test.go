//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyOutput collects what the program writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the output holds s n times; the time limit only ends
// a hung run.
func (o *ptyOutput) waitFor(t *testing.T, s string, n int) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if out := o.String(); strings.Count(out, s) >= n {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %d× %q on the terminal; it shows:\n%s", n, s, o.String())
	return ""
}

// TestRunTerminalPrompts drives `intentgate run` through a pseudo-terminal
// as a person would: the change to an existing file is shown as a diff and
// approved with y, a new file is rejected with n, another is rejected with
// typed feedback, and the completion is accepted with y.
func TestRunTerminalPrompts(t *testing.T) {
	ws := e2eWorkspace(t, agentIntents, map[string]string{"app/a.txt": "one\nold\nthree\n"})
	fake, url := startFake(t,
		turnSelectIntent("t1"),
		turn("", small, call("t0", "read_file", map[string]any{"path": "app/a.txt"})),
		turn("", small, write("t2", "app/a.txt", "one\nnew\nthree\n")),
		turn("", small, write("t3", "app/b.txt", "b\n")),
		turn("", small, write("t4", "app/c.txt", "c\n")),
		complete("t5", "a.txt changed"))
	cmd := exec.Command(e2eBinary(t), "run", "-w", ws, "--auto-approve", "read", "change a.txt")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+url)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer tty.Close()
	out := &ptyOutput{}
	go io.Copy(out, tty)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	const keys = "[y] approve   [n] reject"
	screen := out.waitFor(t, keys, 1)
	for _, want := range []string{"The model wants to change app/a.txt", "--- app/a.txt\r\n+++ app/a.txt\r\n@@ -1,3 +1,3 @@\r\n one\r\n-old\r\n+new\r\n three", "type feedback to reject with it"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the first prompt lacks %q:\n%s", want, screen)
		}
	}
	io.WriteString(tty, "y\n")
	screen = out.waitFor(t, keys, 2)
	if !strings.Contains(screen, "The model wants to create app/b.txt") {
		t.Fatalf("second prompt:\n%s", screen)
	}
	io.WriteString(tty, "n\n")
	out.waitFor(t, keys, 3)
	io.WriteString(tty, "please call it d.txt\n")
	screen = out.waitFor(t, "[y] accept", 1)
	if !strings.Contains(screen, "= a.txt changed") {
		t.Fatalf("completion prompt:\n%s", screen)
	}
	io.WriteString(tty, "y\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("run did not end:\n%s", out.String())
	}

	if b, _ := os.ReadFile(filepath.Join(ws, "app", "a.txt")); string(b) != "one\nnew\nthree\n" {
		t.Errorf("app/a.txt = %q after y", b)
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(ws, "app", f)); err == nil {
			t.Errorf("app/%s was written though rejected", f)
		}
	}
	reqs := fake.Requests()
	if got := resultText(lastUser(t, reqs[4])[0]); got != "The user denied this operation." {
		t.Errorf("after n the model got %q", got)
	}
	if got := resultText(lastUser(t, reqs[5])[0]); !strings.Contains(got, "denied") || !strings.Contains(got, "<feedback>\nplease call it d.txt\n</feedback>") {
		t.Errorf("after typed feedback the model got %q", got)
	}
}
