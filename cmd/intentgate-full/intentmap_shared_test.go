//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Several dispatch processes write in one workspace at the same time, each
// batching its intent map updates and sharing them with the others (a
// process drops a batch another's update shows, or holds it for that
// process's next update). Once they have all exited, intent_map.md must be
// what the ledger renders, every process's records in it. In the second
// case one process is killed (SIGKILL) with its batch held while the others
// go on: its records must be shown too.
func TestConcurrentSessionsMapIsLedgers(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			e := newAtkEnv(t, atkOpts{})
			const procs, writes = 5, 60
			ps := make([]*atkProc, procs)
			for i := range ps {
				ps[i] = e.start()
				ps[i].selectIntent("INT-001")
			}
			// Processes that stop at different times: the last ones go on
			// writing after the first have exited.
			counts, total := make([]int, procs), 0
			for i := range counts {
				counts[i] = writes / 4 * (2 + i)
				if kill && i == 0 {
					counts[i] = writes / 4
				}
				total += counts[i]
			}
			errs := make(chan error, procs)
			var wg sync.WaitGroup
			for i, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := counts[i]
					for j := range n {
						if err := writeNoT(p, fmt.Sprintf("src/p%d/f%d.txt", i, j%7), fmt.Sprintf("process %d write %d\n", i, j)); err != nil {
							errs <- err
							return
						}
					}
					if kill && i == 0 {
						// Its last batch is still held (the batch time is
						// far from over): killed, nobody writes it.
						p.closed = true
						p.cmd.Process.Kill()
						p.cmd.Wait()
						p.cancel()
						return
					}
					// Some pause, so that batches are written by their
					// timers before the process exits.
					time.Sleep(time.Duration(i) * 100 * time.Millisecond)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for _, p := range ps {
				p.close()
			}
			changes := 0
			for _, r := range e.ledger() {
				if r.Meta != nil && r.Meta.Tool == "write_to_file" {
					changes++
				}
			}
			if changes != total {
				t.Fatalf("the ledger holds %d changes, want %d", changes, total)
			}
			checkMapIsLedgers(t, e, 0)
		})
	}
}

// writeNoT sends one write_to_file in session "s" of p and checks that it
// was allowed, without the testing.T a goroutine may not fail.
func writeNoT(p *atkProc, path, content string) error {
	p.n++
	line, err := json.Marshal(map[string]any{"id": fmt.Sprintf("c%d", p.n), "session": "s", "tool": "write_to_file",
		"args": map[string]any{"path": path, "content": content}})
	if err != nil {
		return err
	}
	p.in.Write(append(line, '\n'))
	if err := p.in.Flush(); err != nil {
		return fmt.Errorf("sending call %d: %v (stderr: %s)", p.n, err, p.stderr.String())
	}
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("no answer to call %d: %v (stderr: %s)", p.n, err, p.stderr.String())
	}
	var res resultLine
	if err := json.Unmarshal(ans, &res); err != nil || !res.OK {
		return fmt.Errorf("write %s: %s (%v)", path, ans, err)
	}
	return nil
}
