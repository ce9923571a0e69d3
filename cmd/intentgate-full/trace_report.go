package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceReportOptions struct {
	traceFlags
	output   string
	timeline int
	progress bool
}

func newTraceReportCmd() *cobra.Command {
	o := &traceReportOptions{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write one self-contained HTML report of the ledger",
		Long: `report writes a single HTML file an auditor can open anywhere, with no
network access and no external assets (styles inline, no scripts): the verify
verdict at the top, the intents with their scope and status, the files each
changed with their latest line ranges and whether those still hold, content
drift, counts by model and tool, and a timeline of changes and denials.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceReport(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, false)
	cmd.Flags().StringVarP(&o.output, "output", "o", "report.html", "the HTML file to write (- for stdout)")
	cmd.Flags().IntVar(&o.timeline, "timeline", 1000, "how many of the latest records the timeline shows")
	cmd.Flags().BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	return cmd
}

func runTraceReport(o *traceReportOptions, out, errw io.Writer) error {
	var intents []orchestration.Intent
	set, ierr := orchestration.LoadIntents(filepath.Join(o.workspace, ".orchestration", "active_intents.yaml"))
	if ierr == nil {
		intents = set.Intents
	}
	bar, progress := traceNewProgress(errw, "report", o.progress)
	var buf bytes.Buffer
	d, err := audit.Report(audit.ReportOptions{
		Workspace: o.workspace, Ledger: o.ledger, Intents: intents, IntentsErr: ierr,
		Timeline: o.timeline, Progress: progress,
	}, &buf)
	bar.done()
	if err != nil {
		return err
	}
	if o.output == "-" {
		_, err := out.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(o.output, buf.Bytes(), 0o644); err != nil {
		return err
	}
	verdict := "INTACT"
	if !d.Verify.Intact {
		verdict = "NOT INTACT: " + d.FirstBad
	}
	fmt.Fprintf(out, "wrote %s (%s): %d records, %d intents; %s\n", o.output, traceHumanBytes(int64(buf.Len())), d.Verify.Records, len(d.Intents), verdict)
	return nil
}
