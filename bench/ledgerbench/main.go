// Command ledgerbench measures ledger appends per second from 1 and from N
// processes at once, against a plain durable append (one write and one fsync
// per record under the same kind of lock, no sharing), measured in the same
// run, and prints the ratios:
//
//	go run ./bench/ledgerbench -procs 8 -n 200
//
// Each process appends n records; the figures are records per second of
// wall time over all processes.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/orchestration"
)

func main() {
	procs := flag.Int("procs", 8, "concurrent processes")
	n := flag.Int("n", 200, "records per process")
	child := flag.String("child", "", "internal: append to this ledger (ledger or plain)")
	mode := flag.String("mode", "ledger", "internal: ledger or plain")
	flag.Parse()
	if *child != "" {
		if err := appendMany(*mode, *child, *n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	dir, err := os.MkdirTemp("", "ledgerbench-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	rate := map[string]float64{}
	for _, m := range []string{"plain", "ledger"} {
		for _, p := range []int{1, *procs} {
			path := filepath.Join(dir, fmt.Sprintf("%s-%d", m, p), orchestration.LedgerName)
			os.MkdirAll(filepath.Dir(path), 0o755)
			start := time.Now()
			var wg sync.WaitGroup
			for range p {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(os.Args[0], "-child", path, "-mode", m, "-n", strconv.Itoa(*n))
					cmd.Stderr = os.Stderr
					if err := cmd.Run(); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
				}()
			}
			wg.Wait()
			r := float64(p**n) / time.Since(start).Seconds()
			rate[fmt.Sprintf("%s/%d", m, p)] = r
			fmt.Printf("%-6s %d procs: %8.0f records/s\n", m, p, r)
		}
	}
	fmt.Printf("ledger/plain at 1 process: %.2fx; at %d processes: %.2fx\n",
		rate["ledger/1"]/rate["plain/1"], *procs, rate[fmt.Sprintf("ledger/%d", *procs)]/rate[fmt.Sprintf("plain/%d", *procs)])
}

func appendMany(mode, path string, n int) error {
	if mode == "plain" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		line := []byte(`{"plain":"a durable append of one line, about the size of a small record"}` + "\n")
		for range n {
			lock, err := fsx.Acquire(path + ".lock")
			if err != nil {
				return err
			}
			_, err = f.Write(line)
			if err == nil {
				err = f.Sync()
			}
			lock.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	l, err := orchestration.OpenLedger(path)
	if err != nil {
		return err
	}
	defer l.Close()
	for i := range n {
		rec, err := orchestration.NewRecord(orchestration.RecordInput{ToolVersion: "bench", Model: "bench/model", Path: "src/f.go",
			Ranges: []orchestration.Range{{StartLine: 1, EndLine: 1, ContentHash: orchestration.HashLines(strconv.Itoa(i))}},
			Meta:   orchestration.Meta{Intent: "INT-001", Session: "s", CallID: strconv.Itoa(i), Tool: "write_to_file", Mutation: orchestration.MutationModify}})
		if err != nil {
			return err
		}
		if err := l.Append(rec); err != nil {
			return err
		}
	}
	return nil
}
