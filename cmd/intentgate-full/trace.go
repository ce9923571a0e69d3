package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/spf13/cobra"
)

// traceFlags are the flags every trace subcommand shares.
type traceFlags struct {
	workspace string
	ledger    string
	json      bool
}

func (f *traceFlags) add(cmd *cobra.Command, withJSON bool) {
	cmd.Flags().StringVarP(&f.workspace, "workspace", "w", ".", "the workspace directory")
	cmd.Flags().StringVar(&f.ledger, "ledger", "", "the ledger (default WORKSPACE/.orchestration/agent_trace.jsonl)")
	if withJSON {
		cmd.Flags().BoolVar(&f.json, "json", false, "write JSON for machines")
	}
}

func (f *traceFlags) ledgerPath() string {
	if f.ledger != "" {
		return f.ledger
	}
	return filepath.Join(f.workspace, ".orchestration", orchestration.LedgerName)
}

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Audit the ledger: verify, seal, blame, log, show, stats, report, export, import",
		Long: `trace answers an auditor's questions about .orchestration/agent_trace.jsonl:
can I trust it (verify, seal), who wrote this line (blame), and what happened
under this intent (log, show, stats, report). export and import move records
in and out in the Agent Trace or the seed (trp1) shape.

blame and log use an index in .orchestration/index/, built on first use and
kept up to date as the ledger grows; it is derived, can be deleted at any
time, and every record shown is read from the ledger itself.`,
		PersistentPreRun: func(*cobra.Command, []string) {
			// These commands stream the whole ledger, allocating a little
			// per record that dies at once: collect less often.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(200)
			}
		},
	}
	cmd.AddCommand(
		newTraceVerifyCmd(),
		newTraceSealCmd(),
		newTraceBlameCmd(),
		newTraceLogCmd(),
		newTraceShowCmd(),
		newTraceStatsCmd(),
		newTraceReportCmd(),
		newTraceExportCmd(),
		newTraceImportCmd(),
		newTraceIndexCmd(),
	)
	return cmd
}

func traceWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// traceIsTerminal reports whether w is a terminal (a character device).
func traceIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// traceProgressBar draws "[#####.....]  52%  310 MB/s" on w, at most ten times a
// second, and clears it when done.
type traceProgressBar struct {
	w     io.Writer
	label string
	start time.Time
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

// traceNewProgress returns a progress callback for w, or nil when w is not a
// terminal and force is off.
func traceNewProgress(w io.Writer, label string, force bool) (*traceProgressBar, func(read, total int64)) {
	if !force && !traceIsTerminal(w) {
		return nil, nil
	}
	p := &traceProgressBar{w: w, label: label, start: time.Now()}
	return p, p.update
}

func (p *traceProgressBar) update(read, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond && read < total {
		return
	}
	p.last = now
	frac := 1.0
	if total > 0 {
		frac = min(float64(read)/float64(total), 1)
	}
	const width = 30
	n := int(frac * width)
	rate := float64(read) / 1e6 / max(now.Sub(p.start).Seconds(), 1e-9)
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %6.0f MB/s", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100, rate)
	p.drawn = true
}

func (p *traceProgressBar) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", len(p.label)+50))
	}
}

// traceParseSince reads --since: an RFC 3339 time, a date (UTC), or a duration
// back from now ("36h").
func traceParseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time (2026-03-01T09:00:00Z), a date (2026-03-01) or a duration (36h)", s)
}

func traceHumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
