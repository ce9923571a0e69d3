// Command tracebench times intentgate's ledger audit commands against the
// plain tools that read the same file, in the same run, and prints the
// ratios:
//
//	go run ./bench/genledger -n 1000000 -w /tmp/ws
//	go build -o /tmp/intentgate ./cmd/intentgate
//	go run ./bench/tracebench -bin /tmp/intentgate -w /tmp/ws -rounds 3
//
// trace verify runs against sha256sum of the ledger, trace stats against
// grep -c over it; the medians of the rounds (alternating) are compared.
// With -blame FILE it also times `trace blame FILE` with no index (its first
// use, which builds the index; goal: under 3 s). Each command's largest
// resident set is printed too (where the system reports it).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

func main() {
	bin := flag.String("bin", "intentgate", "the intentgate binary")
	ws := flag.String("w", ".", "the workspace whose ledger is read")
	rounds := flag.Int("rounds", 3, "alternating rounds; medians are compared")
	blame := flag.String("blame", "", "a workspace file to time `trace blame` on, index built from scratch each round")
	flag.Parse()
	ledger := filepath.Join(*ws, ".orchestration", "agent_trace.jsonl")
	if _, err := os.Stat(ledger); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	pairs := []struct {
		name, base string
		cmd, ref   []string
	}{
		{"trace verify --no-drift", "sha256sum", []string{*bin, "trace", "verify", "-w", *ws, "--no-drift", "--no-remote"}, []string{"sha256sum", ledger}},
		{"trace stats", "grep -c", []string{*bin, "trace", "stats", "-w", *ws}, []string{"grep", "-c", "", ledger}},
	}
	for _, p := range pairs {
		var a, b []float64
		var rss int64
		for range *rounds {
			t, _ := run(p.ref)
			b = append(b, t)
			t, r := run(p.cmd)
			a = append(a, t)
			rss = max(rss, r)
		}
		ma, mb := median(a), median(b)
		fmt.Printf("%-24s %8.2fs   %-10s %8.2fs   ratio %.1fx   max RSS %s\n", p.name, ma, p.base, mb, ma/mb, mib(rss))
	}
	if *blame != "" {
		var a []float64
		var rss int64
		for range *rounds {
			if err := os.RemoveAll(filepath.Join(*ws, ".orchestration", "index")); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			t, r := run([]string{*bin, "trace", "blame", "-w", *ws, *blame})
			a = append(a, t)
			rss = max(rss, r)
		}
		fmt.Printf("%-24s %8.2fs   (goal: under 3 s)   max RSS %s\n", "trace blame, no index", median(a), mib(rss))
	}
}

func mib(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// run runs argv and returns its wall time and its largest resident set in
// bytes (0 where unknown).
func run(argv []string) (float64, int64) {
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	// Not /dev/null: GNU grep stops at the first match when its output is
	// /dev/null, which is no count at all.
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			fmt.Fprintf(os.Stderr, "%v: %v\n", argv, err)
			os.Exit(2)
		}
	}
	return time.Since(start).Seconds(), maxRSS(cmd.ProcessState)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
