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
package main

import (
	"flag"
	"fmt"
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
		for range *rounds {
			b = append(b, run(p.ref))
			a = append(a, run(p.cmd))
		}
		ma, mb := median(a), median(b)
		fmt.Printf("%-24s %8.2fs   %-10s %8.2fs   ratio %.1fx\n", p.name, ma, p.base, mb, ma/mb)
	}
}

func run(argv []string) float64 {
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			fmt.Fprintf(os.Stderr, "%v: %v\n", argv, err)
			os.Exit(2)
		}
	}
	return time.Since(start).Seconds()
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
