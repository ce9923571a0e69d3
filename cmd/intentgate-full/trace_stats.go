package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceStatsOptions struct {
	traceFlags
	progress bool
}

func newTraceStatsCmd() *cobra.Command {
	o := &traceStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count records, lines added, files touched and denials per intent, model and tool",
		Long: `stats reads the whole ledger and prints, per intent, per model and per tool:
records, changes, lines added (lines inside recorded ranges), distinct files
touched, violations, and denials by code. Then the tool usage of every
session of the workspace: per tool attempts, failures and success rate, the
most used tools and the problematic ones (a failure rate of at least 20%
over at least 3 attempts). --json prints all of it as one object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceStats(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, true)
	cmd.Flags().BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	return cmd
}

func runTraceStats(o *traceStatsOptions, out, errw io.Writer) error {
	bar, progress := traceNewProgress(errw, "stats", o.progress)
	s, err := audit.StatsFor(audit.StatsOptions{Workspace: o.workspace, Ledger: o.ledger, Progress: progress})
	bar.done()
	if err != nil {
		return err
	}
	if o.json {
		return traceWriteJSON(out, s)
	}
	report := s.ToolUsage
	fmt.Fprintf(out, "%d lines, %d records", s.Lines, s.Records)
	if s.Unparsable > 0 {
		fmt.Fprintf(out, ", %d unparsable (trace verify says why)", s.Unparsable)
	}
	fmt.Fprintln(out)
	for _, t := range []struct {
		title string
		rows  []audit.StatRow
	}{{"INTENT", s.ByIntent}, {"MODEL", s.ByModel}, {"TOOL", s.ByTool}} {
		fmt.Fprintln(out)
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\tRECORDS\tCHANGES\tLINES ADDED\tFILES\tVIOLATIONS\tDENIALS\tBY CODE\n", t.title)
		for _, r := range t.rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", traceDash(r.Key), r.Records, r.Changes, r.LinesAdded, r.FilesTouched, r.Violations, r.Denials, traceCodes(r.DenialCodes))
		}
		tw.Flush()
	}
	// The ledger holds changes and refusals; every call, reads included,
	// is counted in the sessions.
	w := &sessionWriter{out: out}
	w.line("")
	if len(report.Tools) == 0 {
		w.line("tool usage: (none recorded in %d sessions)", s.Sessions)
		return w.err
	}
	w.line("tool usage (all %d sessions):", s.Sessions)
	writeUsageReport(w, report)
	return w.err
}

func traceCodes(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
