package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceExportOptions struct {
	traceFlags
	format string
	output string
}

func newTraceExportCmd() *cobra.Command {
	o := &traceExportOptions{}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the ledger's records as Agent Trace or in the seed (trp1) shape",
		Long: `export writes every record of the ledger, one JSON object per line, as
Agent Trace 0.1.0 records (--format agent-trace) or in the seed
specification's shape (--format trp1: vcs.revision_id, relative_path,
contributor.entity_type and model_identifier, related {type:"specification",
value}). metadata["dev.intentgate"] is kept as is, chain links included;
they name the ledger's lines, not the export's. Lines that are not records
are left out and reported on stderr, and the exit status is then 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceExport(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, false)
	cmd.Flags().StringVar(&o.format, "format", "agent-trace", "agent-trace or trp1")
	cmd.Flags().StringVarP(&o.output, "output", "o", "-", "the file to write (- for stdout)")
	return cmd
}

func runTraceExport(o *traceExportOptions, out, errw io.Writer) error {
	shape, err := audit.ParseShape(o.format)
	if err != nil {
		return err
	}
	w := out
	var f *os.File
	if o.output != "-" {
		if f, err = os.Create(o.output); err != nil {
			return err
		}
		w = f
	}
	n, skipped, err := audit.Export(o.ledgerPath(), shape, w)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(errw, "exported %d records; left out %d lines that are not records (first: line %d; trace verify says why)\n", n, len(skipped), skipped[0])
		return &exitError{code: 1, err: errors.New("some lines were not exported")}
	}
	if o.output != "-" {
		fmt.Fprintf(errw, "exported %d records to %s as %s\n", n, o.output, o.format)
	}
	return nil
}

type traceImportOptions struct {
	traceFlags
}

func newTraceImportCmd() *cobra.Command {
	o := &traceImportOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Append records (Agent Trace or trp1 shape) to the ledger, chained",
		Long: `import reads JSON Lines records in either shape from FILE (- for stdin),
validates every one as Agent Trace 0.1.0 first (nothing is appended if one is
bad), and appends them through the ledger in the Agent Trace shape, each
linked to the line before it, so the chain holds; the prev a record had in its
source is replaced. A record whose id the ledger already has, or that
appeared earlier in the input, is a duplicate and skipped: importing the same
file twice appends it once. The intent map is brought up to date afterwards.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceImport(o, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, true)
	return cmd
}

func runTraceImport(o *traceImportOptions, file string, stdin io.Reader, out, errw io.Writer) error {
	var r io.Reader = stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	start := time.Now()
	res, warning, err := audit.ImportInto(audit.ImportOptions{Workspace: o.workspace, Ledger: o.ledger}, r)
	if err != nil {
		return err
	}
	if warning != nil {
		fmt.Fprintf(errw, "warning: %v\n", warning)
	}
	if o.json {
		return traceWriteJSON(out, res)
	}
	fmt.Fprintf(out, "read %d records: appended %d, skipped %d duplicates (%.2fs)\n", res.Read, res.Appended, res.Duplicates, time.Since(start).Seconds())
	return nil
}

type traceIndexOptions struct {
	traceFlags
	rebuild bool
}

func newTraceIndexCmd() *cobra.Command {
	o := &traceIndexOptions{}
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build or bring up to date the index blame and log use",
		Long: `index brings .orchestration/index/ up to date with the ledger (blame and log
do this themselves; this does it ahead of time). The index is derived: it
records how much of the ledger it covers and the hash of the last line it
indexed, and is rebuilt when the ledger no longer starts with what it saw.
--rebuild throws it away and builds it again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceIndex(o, cmd.OutOrStdout())
		},
	}
	o.add(cmd, false)
	cmd.Flags().BoolVar(&o.rebuild, "rebuild", false, "rebuild from scratch")
	return cmd
}

func runTraceIndex(o *traceIndexOptions, out io.Writer) error {
	start := time.Now()
	ix, err := audit.OpenIndex(o.ledgerPath(), o.workspace)
	if err != nil {
		return err
	}
	defer ix.Close()
	if o.rebuild {
		if err := ix.Rebuild(); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "index %s: %d lines (%.2fs)\n", ix.Built, ix.Lines(), time.Since(start).Seconds())
	return nil
}
