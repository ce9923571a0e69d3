package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/intentgate/intentgate/orchestration/audit"
	"github.com/spf13/cobra"
)

type traceSealOptions struct {
	traceFlags
	force    bool
	progress bool
}

func newTraceSealCmd() *cobra.Command {
	o := &traceSealOptions{}
	cmd := &cobra.Command{
		Use:   "seal",
		Short: "Record a checkpoint of the ledger under refs/intentgate/checkpoints",
		Long: `seal verifies the ledger, then records a checkpoint of it as a commit on the
git ref refs/intentgate/checkpoints (in the repository's object store, outside
any file an agent can edit): the number of complete lines, their byte count,
the SHA-256 of those bytes (check it with head -c BYTES agent_trace.jsonl |
sha256sum) and the hash of every line since the previous checkpoint. From then
on verify proves the ledger only grew: a truncation, rollback, rewrite, or any
edit, deletion, insertion or reordering of sealed lines is named exactly.

It refuses a ledger that does not verify (a checkpoint would bless the
damage) unless --force. Push the ref to keep a copy beyond the local shell:
  git push origin refs/intentgate/checkpoints`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTraceSeal(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, true)
	cmd.Flags().BoolVar(&o.force, "force", false, "seal even a ledger that does not verify")
	cmd.Flags().BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	return cmd
}

func runTraceSeal(o *traceSealOptions, out, errw io.Writer) error {
	bar, progress := traceNewProgress(errw, "seal", o.progress)
	cp, rep, err := audit.Seal(audit.SealOptions{Workspace: o.workspace, Ledger: o.ledger, Force: o.force, Progress: progress})
	bar.done()
	if errors.Is(err, audit.ErrNotIntact) {
		tracePrintVerify(out, rep)
		return &exitError{code: 1, err: fmt.Errorf("not sealed: %w (use --force once the damage is understood)", err)}
	}
	if err != nil {
		return err
	}
	if o.json {
		return traceWriteJSON(out, struct {
			*audit.Checkpoint
			Commit string `json:"commit"`
			Ref    string `json:"ref"`
		}{cp, cp.Commit, audit.CheckpointRef})
	}
	fmt.Fprintf(out, "sealed %s: %d records, %s, sha256 %s\ncheckpoint %s on %s\n",
		cp.Ledger, cp.Records, traceHumanBytes(cp.Bytes), cp.SHA256, cp.Commit, audit.CheckpointRef)
	if !rep.Intact {
		fmt.Fprintf(out, "warning: sealed with --force over: %s\n", rep.FirstBad)
	}
	return nil
}
