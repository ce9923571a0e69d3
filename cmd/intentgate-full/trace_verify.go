package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceVerifyOptions struct {
	traceFlags
	progress bool
	noDrift  bool
	remote   string
	noRemote bool
}

func newTraceVerifyCmd() *cobra.Command {
	o := &traceVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check that the ledger is intact: schema, hash chain, checkpoints, and content drift",
		Long: `verify reads the ledger once and checks that every line is a valid Agent Trace
0.1.0 record, that the prev chain holds (union-merge forks are reported, not
failed), that every checkpoint sealed under refs/intentgate/checkpoints is
still a prefix of the ledger, and reports a torn last line. A fork (a record
linked to an earlier line than the one before it) passes only where git's
history shows a merge joining two branches of the ledger; anywhere else it is
an insertion. The checkpoint chain is also held against the last seal made on
this machine (kept outside the workspace) and against the checkpoints on the
team's remote (--remote, default origin): a ref deleted or moved back is
reported. For each file it
also says whether the latest recorded ranges still hold their content, moved
elsewhere in the file, changed, or whether the file is gone.

The first bad record is named by line number and kind: edit, deletion,
insertion, reorder, truncation or rewrite (a hash chain alone cannot always
tell an edit from a deletion right after the line; a checkpoint can).

Exit status: 0 intact, 1 not intact, 2 verify could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceVerify(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, true)
	cmd.Flags().BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	cmd.Flags().BoolVar(&o.noDrift, "no-drift", false, "skip the content drift check")
	cmd.Flags().StringVar(&o.remote, "remote", "", "git remote whose refs/intentgate/checkpoints the ledger is held against too (default origin, when there is one)")
	cmd.Flags().BoolVar(&o.noRemote, "no-remote", false, "do not fetch the remote's checkpoints")
	return cmd
}

// verifyMemoryLimit is the soft heap limit verify runs under, unless
// GOMEMLIMIT says otherwise, and verifyGCPercent its GOGC unless GOGC says
// otherwise: what verify keeps is a few flat arrays without pointers (48
// bytes a line), which the collector does not scan, so collecting often is
// cheap and keeps the heap near what is kept rather than twice that.
const (
	verifyMemoryLimit = 160 << 20
	verifyGCPercent   = 20
)

func runTraceVerify(o *traceVerifyOptions, out, errw io.Writer) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(verifyMemoryLimit))
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(verifyGCPercent))
	}
	bar, progress := traceNewProgress(errw, "verify", o.progress)
	rep, err := audit.Verify(audit.VerifyOptions{Workspace: o.workspace, Ledger: o.ledger, NoDrift: o.noDrift, Progress: progress,
		Remote: o.remote, NoRemote: o.noRemote})
	bar.done()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if o.json {
		if err := traceWriteJSON(out, rep); err != nil {
			return err
		}
	} else {
		tracePrintVerify(out, rep)
	}
	if !rep.Intact {
		return &exitError{code: 1, err: errors.New("the ledger is not intact")}
	}
	return nil
}

func tracePrintVerify(out io.Writer, rep *audit.VerifyReport) {
	rate := float64(rep.Bytes) / 1e6 / max(rep.Seconds, 1e-9)
	fmt.Fprintf(out, "%s: %d lines, %d records, %s, read in %.2fs (%.0f MB/s)\n",
		rep.Ledger, rep.Lines, rep.Records, traceHumanBytes(rep.Bytes), rep.Seconds, rate)
	switch {
	case rep.Intact:
		fmt.Fprintln(out, "INTACT")
	case rep.FirstBad == nil:
		fmt.Fprintln(out, "NOT INTACT: changes were made without a record")
	default:
		fmt.Fprintf(out, "NOT INTACT: first bad record at line %d: %s: %s\n", rep.FirstBad.Line, rep.FirstBad.Kind, rep.FirstBad.Detail)
		const show = 20
		for i, p := range rep.Problems {
			if i == show {
				fmt.Fprintf(out, "  ... and %d more\n", len(rep.Problems)-show)
				break
			}
			fmt.Fprintf(out, "  line %d: %s (%s): %s\n", p.Line, p.Kind, p.Fault, p.Detail)
		}
	}
	for _, u := range rep.Unrecorded {
		fmt.Fprintf(out, "  CHANGED WITHOUT A RECORD: %s (%s, session %q, call %q, %s): a crash came between the change and its record; the next intentgate command in this workspace records it\n",
			u.Path, u.Tool, u.Session, u.CallID, u.Time.UTC().Format(time.RFC3339))
	}
	for _, r := range rep.Recovered {
		fmt.Fprintf(out, "recorded after a crash: line %d: %s\n", r.Line, r.Detail)
	}
	if rep.SeedRecords > 0 {
		fmt.Fprintf(out, "%d records are in the seed (trp1) shape; they validate as the Agent Trace records they stand for\n", rep.SeedRecords)
	}
	if len(rep.Forks) > 0 {
		var parts []string
		for i, f := range rep.Forks {
			if i == 10 {
				parts = append(parts, fmt.Sprintf("and %d more", len(rep.Forks)-10))
				break
			}
			if f.Parent == 0 {
				parts = append(parts, fmt.Sprintf("line %d starts a new chain", f.Line))
			} else {
				parts = append(parts, fmt.Sprintf("line %d -> line %d", f.Line, f.Parent))
			}
		}
		fmt.Fprintf(out, "forks (each must be a git merge of two branches of the ledger): %s\n", strings.Join(parts, ", "))
	}
	if rep.TornTail > 0 {
		fmt.Fprintf(out, "torn tail: the last %d bytes are not a complete line (a crash, or an append in progress); the next append moves them to %s.broken\n", rep.TornTail, rep.Ledger)
	}
	if rep.Anchored != "" {
		fmt.Fprintf(out, "anchor: last seal on this machine %s\n", rep.Anchored)
	}
	if rep.Remote != "" {
		note := rep.RemoteNote
		if note == "" {
			note = "its checkpoints are in the local chain"
		}
		fmt.Fprintf(out, "remote %s: %s\n", rep.Remote, note)
	}
	switch {
	case rep.CheckpointNote != "":
		fmt.Fprintf(out, "checkpoints: %s\n", rep.CheckpointNote)
	case len(rep.Checkpoints) == 0:
		fmt.Fprintln(out, "checkpoints: none (intentgate trace seal makes one)")
	default:
		fmt.Fprintf(out, "checkpoints: %d\n", len(rep.Checkpoints))
		for _, c := range rep.Checkpoints {
			state := "holds: the ledger only grew since"
			if !c.OK {
				state = "BROKEN: " + c.Finding.Detail
			}
			fmt.Fprintf(out, "  %.12s %s %d records: %s\n", c.Commit, c.Time.UTC().Format("2006-01-02T15:04:05Z"), c.Records, state)
		}
	}
	counts := map[string]int{}
	for _, d := range rep.Drift {
		counts[d.Status]++
	}
	if len(rep.Drift) > 0 {
		fmt.Fprintf(out, "content: %d files: %d unchanged, %d hold, %d moved, %d changed, %d deleted, %d removed by their records\n",
			len(rep.Drift), counts[audit.DriftUnchanged], counts[audit.DriftHolds], counts[audit.DriftMoved],
			counts[audit.DriftChanged], counts[audit.DriftDeleted], counts[audit.DriftRemoved])
		shown := 0
		for _, d := range rep.Drift {
			if d.Status == audit.DriftUnchanged || d.Status == audit.DriftRemoved || d.Status == audit.DriftHolds {
				continue
			}
			if shown++; shown > 20 {
				fmt.Fprintln(out, "  ...")
				break
			}
			fmt.Fprintf(out, "  %s: %s since line %d (%.8s)", d.Path, d.Status, d.Line, d.Record)
			for _, r := range d.Ranges {
				if r.Status == audit.DriftMoved {
					fmt.Fprintf(out, "; %d-%d moved to %d", r.Start, r.End, r.MovedTo)
				} else if r.Status == audit.DriftChanged {
					fmt.Fprintf(out, "; %d-%d changed", r.Start, r.End)
				}
			}
			if d.Detail != "" {
				fmt.Fprintf(out, ": %s", d.Detail)
			}
			fmt.Fprintln(out)
		}
	}
}
