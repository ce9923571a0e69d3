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
// trace stats is timed three ways: with no count kept (its cache in the
// index directory removed first: a full count), right after (nothing
// appended: the kept count), and after -append governed writes through
// `intentgate dispatch` (the kept count extended). With -blame FILE it also
// times `trace blame FILE` with no index (its first use, which builds the
// index; goal: under 3 s) and with the index current. Wall time, CPU time
// (user+system) and each command's largest resident set are printed (where
// the system reports them).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration"
)

func main() {
	bin := flag.String("bin", "intentgate", "the intentgate binary")
	ws := flag.String("w", ".", "the workspace whose ledger is read")
	rounds := flag.Int("rounds", 3, "alternating rounds; medians are compared")
	blame := flag.String("blame", "", "a workspace file to time `trace blame` on, index built from scratch each round")
	appends := flag.Int("append", 5, "governed writes appended through `intentgate dispatch` before the third stats run of each round (0: none)")
	flag.Parse()
	ledger := filepath.Join(*ws, ".orchestration", "agent_trace.jsonl")
	if _, err := os.Stat(ledger); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	intent, dir := "", ""
	if *appends > 0 {
		intent, dir = appendTarget(*ws)
	}
	index := filepath.Join(*ws, ".orchestration", "index")
	grep := []string{"grep", "-c", "", ledger}
	stats := []string{*bin, "trace", "stats", "-w", *ws}
	pairs := []struct {
		name, base string
		cmd, ref   []string
		before     func(round int)
	}{
		{"trace verify --no-drift", "sha256sum", []string{*bin, "trace", "verify", "-w", *ws, "--no-drift", "--no-remote"}, []string{"sha256sum", ledger}, nil},
		{"trace stats, no cache", "grep -c", stats, grep, func(int) { must(os.Remove(filepath.Join(index, "stats.bin")), true) }},
		{"trace stats, cached", "grep -c", stats, grep, nil},
	}
	if *appends > 0 {
		pairs = append(pairs, struct {
			name, base string
			cmd, ref   []string
			before     func(round int)
		}{fmt.Sprintf("trace stats, %d appended", *appends), "grep -c", stats, grep, func(round int) {
			dispatch(*bin, *ws, intent, dir, round, *appends)
		}})
	}
	for _, p := range pairs {
		var a, b, ca, cb []float64
		var rss int64
		for round := range *rounds {
			m := run(p.ref)
			b, cb = append(b, m.wall), append(cb, m.cpu)
			if p.before != nil {
				p.before(round)
			}
			m = run(p.cmd)
			a, ca = append(a, m.wall), append(ca, m.cpu)
			rss = max(rss, m.rss)
		}
		ma, mb := median(a), median(b)
		fmt.Printf("%-28s %7.2fs   %-10s %7.2fs   ratio %5.2fx   CPU %5.2fs / %5.2fs = %5.2fx   max RSS %s\n",
			p.name, ma, p.base, mb, ma/mb, median(ca), median(cb), median(ca)/median(cb), mib(rss))
	}
	if *blame != "" {
		cmd := []string{*bin, "trace", "blame", "-w", *ws, *blame}
		for _, fresh := range []bool{true, false} {
			var a, ca []float64
			var rss int64
			for range *rounds {
				if fresh {
					must(os.RemoveAll(index), false)
				}
				m := run(cmd)
				a, ca = append(a, m.wall), append(ca, m.cpu)
				rss = max(rss, m.rss)
			}
			name, goal := "trace blame, index current", ""
			if fresh {
				name, goal = "trace blame, no index", "(goal: under 3 s)"
			}
			fmt.Printf("%-28s %7.2fs   CPU %5.2fs   max RSS %s   %s\n", name, median(a), median(ca), mib(rss), goal)
		}
	}
}

// appendTarget is the first intent of the workspace and the directory of
// its first scope (genledger's scopes are DIR/**), where the appended
// writes go.
func appendTarget(ws string) (intent, dir string) {
	set, err := orchestration.LoadIntents(filepath.Join(ws, ".orchestration", "active_intents.yaml"))
	if err != nil || len(set.Intents) == 0 || len(set.Intents[0].OwnedScope) == 0 {
		fmt.Fprintf(os.Stderr, "-append needs an intent with a scope DIR/** in the workspace: %v\n", err)
		os.Exit(2)
	}
	in := set.Intents[0]
	d, ok := strings.CutSuffix(in.OwnedScope[0], "/**")
	if !ok || strings.ContainsAny(d, "*?[{") {
		fmt.Fprintf(os.Stderr, "-append: the first scope of %s is %q, not DIR/**\n", in.ID, in.OwnedScope[0])
		os.Exit(2)
	}
	return in.ID, d
}

// dispatch appends n governed writes (new files under dir) through
// `intentgate dispatch`, in a session of their own.
func dispatch(bin, ws, intent, dir string, round, n int) {
	session := fmt.Sprintf("tracebench-%d-%d", time.Now().UnixNano(), round)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(map[string]any{"id": "0", "session": session, "tool": "select_active_intent", "args": map[string]string{"intent_id": intent}})
	for i := range n {
		enc.Encode(map[string]any{"id": fmt.Sprint(i + 1), "session": session, "tool": "write_to_file",
			"args":  map[string]string{"path": fmt.Sprintf("%s/tracebench_%s_%d.go", dir, session, i), "content": fmt.Sprintf("package bench\n\n// %s %d\n", session, i)},
			"agent": map[string]string{"name": "tracebench", "model": "bench/model"}})
	}
	cmd := exec.Command(bin, "dispatch", "--workspace", ws)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dispatch: %v\n", err)
		os.Exit(2)
	}
	if got := bytes.Count(out, []byte(`"ok":true`)); got != n+1 {
		fmt.Fprintf(os.Stderr, "dispatch: %d of %d calls succeeded:\n%s", got, n+1, out)
		os.Exit(2)
	}
}

func must(err error, missingOK bool) {
	if err != nil && !(missingOK && os.IsNotExist(err)) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func mib(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

type measure struct {
	wall, cpu float64 // seconds
	rss       int64   // bytes, 0 where unknown
}

// run runs argv and returns its wall time, CPU time and largest resident
// set.
func run(argv []string) measure {
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
	ps := cmd.ProcessState
	return measure{wall: time.Since(start).Seconds(), cpu: (ps.UserTime() + ps.SystemTime()).Seconds(), rss: maxRSS(ps)}
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
