package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceBlameOptions struct {
	traceFlags
	lines   string
	noIndex bool
}

func newTraceBlameCmd() *cobra.Command {
	o := &traceBlameOptions{}
	cmd := &cobra.Command{
		Use:   "blame FILE",
		Short: "Say which record (intent, session, model, tool) last wrote each line of a file",
		Long: `blame attributes each line of FILE as it is now to the ledger record that last
wrote it, by content hash, so attributions survive lines moving within the
file and, for recorded blocks whose content is unique, into other files.
Lines no record explains are shown as unattributed, with the reason; nothing
is guessed.

Evidence, per line: replay (the file's records walked back from its current
content, each step checked against the ledger's hashes), moved (a record
moved the line; it keeps its writer), range (a recorded range's hash matches
these lines), range-elsewhere (a range recorded for another file).

Output columns: record, intent, session, model, tool, date, evidence, line.
--json writes {"path","records","lines":[{"line","text","record":{...}} or
{"line","text","unattributed":"reason"}]}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceBlame(o, args[0], cmd.OutOrStdout())
		},
	}
	o.add(cmd, true)
	cmd.Flags().StringVarP(&o.lines, "lines", "L", "", "only lines a,b (1-based, inclusive)")
	cmd.Flags().BoolVar(&o.noIndex, "no-index", false, "read the whole ledger instead of the index")
	return cmd
}

// traceParseLineRange reads -L "a,b" (or "a" for one line).
func traceParseLineRange(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, found := strings.Cut(s, ",")
	from, err := strconv.Atoi(strings.TrimSpace(a))
	to := from
	if err == nil && found {
		to, err = strconv.Atoi(strings.TrimSpace(b))
	}
	if err != nil || from < 1 || to < from {
		return 0, 0, fmt.Errorf("-L %q: want a,b with 1 <= a <= b", s)
	}
	return from, to, nil
}

func runTraceBlame(o *traceBlameOptions, file string, out io.Writer) error {
	from, to, err := traceParseLineRange(o.lines)
	if err != nil {
		return err
	}
	res, err := audit.Blame(audit.BlameOptions{Workspace: o.workspace, Ledger: o.ledger, Path: file, NoIndex: o.noIndex})
	if err != nil {
		return err
	}
	if from > 0 {
		if err := res.Only(from, to); err != nil {
			return fmt.Errorf("-L %s: %w", o.lines, err)
		}
	}
	if o.json {
		return traceWriteJSON(out, res)
	}
	rows := make([][]string, len(res.Lines))
	widths := make([]int, 7)
	for i, l := range res.Lines {
		var row []string
		if a := l.Record; a != nil {
			ev := a.Evidence
			if a.From != "" {
				ev += " " + a.From
			}
			row = []string{audit.ShortID(a.Record), traceDash(a.Intent), traceDash(a.Session), traceDash(a.Model), traceDash(a.Tool), a.Time.UTC().Format("2006-01-02"), ev}
		} else {
			row = []string{"--------", "(" + l.Reason + ")", "", "", "", "", ""}
		}
		rows[i] = row
		if l.Record != nil {
			for j, c := range row {
				widths[j] = max(widths[j], len(c))
			}
		}
	}
	numW := len(strconv.Itoa(len(res.Lines) + from))
	for i, l := range res.Lines {
		row := rows[i]
		if l.Record != nil {
			for j, c := range row {
				fmt.Fprintf(out, "%-*s ", widths[j], c)
			}
		} else {
			total := len(widths) - 1
			for _, w := range widths {
				total += w
			}
			fmt.Fprintf(out, "%-*s ", total, row[0]+" "+row[1])
		}
		fmt.Fprintf(out, "%*d) %s\n", numW, l.Line, l.Text)
	}
	return nil
}

func traceDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
