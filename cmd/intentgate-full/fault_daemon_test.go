package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFaultDaemonKilledMidRequest: while a Claude Code session writes 60
// files through `intentgate hook claude-code` (a pre event, the write, a
// post event each), the daemon serving the workspace is killed with SIGKILL
// at random moments and started again. A hook process handles an event
// itself only when no daemon answered the connection at all; when one took
// the event and died, the hook refuses (pre) or says the change may be
// unrecorded (post), and never handles it again. So no change is recorded
// twice, and every change whose post event was acknowledged has exactly one
// record.
func TestFaultDaemonKilledMidRequest(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the hook never uses the daemon's socket on Windows")
	}
	const events = 60
	e := newHookEnv(t, "claude-code", map[string]string{"src/keep.txt": "keep\n"})
	e.intentUse(claudeSession, "INT-001")
	bin := e2eBinary(t)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	kills, starts := 0, 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			default:
			}
			cmd := exec.Command(bin, "serve", "--workspace", e.ws, "--addr", "127.0.0.1:0")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Error(err)
				return
			}
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if strings.Contains(line, "socket") {
				mu.Lock()
				starts++
				mu.Unlock()
			}
			// Random moments, most of them while an event is in progress.
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			cmd.Process.Kill()
			cmd.Wait()
			mu.Lock()
			kills++
			mu.Unlock()
			time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		}
	}()

	acked := make([]bool, events)
	midEvent, fallback := 0, 0
	for i := range events {
		rel := fmt.Sprintf("src/f%03d.txt", i)
		content := fmt.Sprintf("file %d\n", i)
		set := map[string]any{
			"tool_input.file_path":   placeholder + "/" + rel,
			"tool_input.content":     content,
			"tool_use_id":            fmt.Sprintf("toolu_k%d", i),
			"tool_response.filePath": placeholder + "/" + rel,
			"tool_response.content":  content,
		}
		pre := e.run(e.payload("PreToolUse-Write", set))
		count := func(o hookOut) {
			if strings.Contains(o.stderr, "stopped in the middle of this event") {
				midEvent++
			}
			if strings.Contains(o.stderr, "handling the event here") {
				fallback++
			}
		}
		count(pre)
		if pre.code != 0 || strings.Contains(pre.stdout, `"deny"`) {
			continue // refused: the agent does not write
		}
		e.write(rel, content)
		post := e.run(e.payload("PostToolUse-Write", set))
		count(post)
		acked[i] = post.code == 0 && strings.TrimSpace(post.stdout) == ""
	}
	close(stop)
	wg.Wait()

	counts := map[string]int{}
	for _, l := range sbxLedger(t, e.ws) {
		for _, f := range l.Files {
			counts[f.Path]++
		}
	}
	nAcked := 0
	for i := range events {
		rel := fmt.Sprintf("src/f%03d.txt", i)
		if counts[rel] > 1 {
			t.Errorf("%s is recorded %d times", rel, counts[rel])
		}
		if acked[i] {
			nAcked++
			if counts[rel] != 1 {
				t.Errorf("%s: its post event was acknowledged, and it has %d records", rel, counts[rel])
			}
		}
	}
	t.Logf("%d daemon starts, %d kills; %d of %d changes acknowledged; %d events answered 'stopped in the middle', %d handled by the hook process itself",
		starts, kills, nAcked, events, midEvent, fallback)
	if kills < 2 || nAcked == 0 {
		t.Errorf("the test did not exercise what it should: %d kills, %d acknowledged changes", kills, nAcked)
	}
	out, code := sbxVerify(t, e.ws)
	if code != 0 {
		// Changes whose record the daemon did not write before it died
		// are not problems of the ledger's chain; anything else is.
		t.Errorf("trace verify: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(e.path(".orchestration/tmp")); err == nil {
		if left, _ := os.ReadDir(e.path(".orchestration/tmp")); len(left) > 0 {
			t.Logf(".orchestration/tmp holds %d entries after the kills (cleaned on the next open)", len(left))
		}
	}
}
