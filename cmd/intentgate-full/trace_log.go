package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceLogOptions struct {
	traceFlags
	intent, file, session, since string
	denials                      bool
	limit                        int
	noIndex                      bool
}

func newTraceLogCmd() *cobra.Command {
	o := &traceLogOptions{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List records, filtered by intent, file, session, time or refusals",
		Long: `log lists the ledger's records in ledger order, one per line: time, record
id (its first 8 hex digits; trace show takes them), intent, session, model,
tool, and what happened: the files and line ranges changed, or the denial code
and message. Filters combine: --intent INT-001 --denials lists that intent's
refusals. --json writes one JSON object per line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceLog(o, cmd.OutOrStdout(), time.Now())
		},
	}
	o.add(cmd, true)
	cmd.Flags().StringVar(&o.intent, "intent", "", "only records of this intent")
	cmd.Flags().StringVar(&o.file, "file", "", "only records that name this file")
	cmd.Flags().StringVar(&o.session, "session", "", "only records of this session")
	cmd.Flags().StringVar(&o.since, "since", "", "only records from this time on: RFC 3339, a date, or a duration back (36h)")
	cmd.Flags().BoolVar(&o.denials, "denials", false, "only refusals")
	cmd.Flags().IntVarP(&o.limit, "limit", "n", 0, "only the last N records")
	cmd.Flags().BoolVar(&o.noIndex, "no-index", false, "scan the ledger instead of using the index")
	return cmd
}

func runTraceLog(o *traceLogOptions, out io.Writer, now time.Time) error {
	since, err := traceParseSince(o.since, now)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	err = audit.LogEach(audit.LogOptions{
		Workspace: o.workspace, Ledger: o.ledger, Intent: o.intent, File: o.file, Session: o.session,
		Since: since, Denials: o.denials, Limit: o.limit, NoIndex: o.noIndex,
	}, func(e *audit.Entry) error {
		if o.json {
			return enc.Encode(e)
		}
		tracePrintEntry(w, e)
		return nil
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func tracePrintEntry(w io.Writer, e *audit.Entry) {
	what := ""
	switch {
	case e.IsDenial():
		what = "DENIED " + e.Denial
		if e.Message != "" {
			what += ": " + e.Message
		}
	default:
		var parts []string
		for _, f := range e.Files {
			p := f.Path
			if len(f.Ranges) > 0 {
				var rs []string
				for _, r := range f.Ranges {
					if r[0] == r[1] {
						rs = append(rs, fmt.Sprint(r[0]))
					} else {
						rs = append(rs, fmt.Sprintf("%d-%d", r[0], r[1]))
					}
				}
				p += ":" + strings.Join(rs, ",")
			}
			parts = append(parts, p)
		}
		what = e.Mutation + " " + strings.Join(parts, " ")
		if e.Decision == "violation" || e.Mutation == "violation" {
			what = "VIOLATION " + strings.Join(parts, " ")
		}
	}
	fmt.Fprintf(w, "%s %s %s %s %s %s  %s\n", e.Time.UTC().Format("2006-01-02T15:04:05Z"), audit.ShortID(e.ID),
		traceDash(e.Intent), traceDash(e.Session), traceDash(e.Model), traceDash(e.Tool), what)
}

type traceShowOptions struct {
	traceFlags
}

func newTraceShowCmd() *cobra.Command {
	o := &traceShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one record, found by id or an unambiguous prefix of it",
		Long: `show prints one record: where it is in the ledger, how its prev links it into
the chain, a summary, and the record itself as JSON. ID is a record id or its
last 12 hex digits as log prints them (any unambiguous prefix or suffix of 8 or more).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTraceShow(o, args[0], cmd.OutOrStdout())
		},
	}
	o.add(cmd, true)
	return cmd
}

func runTraceShow(o *traceShowOptions, id string, out io.Writer) error {
	s, err := audit.Show(o.workspace, o.ledger, id)
	if err != nil {
		return err
	}
	if o.json {
		return traceWriteJSON(out, s)
	}
	fmt.Fprintf(out, "record %s\nledger line %d; prev: %s", s.ID, s.Line, s.Link)
	switch {
	case s.Last:
		fmt.Fprint(out, "; the last line")
	case s.NextLinks:
		fmt.Fprint(out, "; the next line links to it")
	default:
		fmt.Fprint(out, "; the next line does not link to it (a fork, or tampering: run trace verify)")
	}
	fmt.Fprintln(out)
	tracePrintEntry(out, &s.Entry)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, s.Record, "", "  "); err != nil {
		pretty.Write(s.Record)
	}
	pretty.WriteByte('\n')
	_, err = out.Write(pretty.Bytes())
	return err
}
