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
	push     string // the remote to push the checkpoint ref to, "" for none
}

func newTraceSealCmd() *cobra.Command {
	o := &traceSealOptions{}
	cmd := &cobra.Command{
		Use:   "seal [--push [REMOTE]]",
		Short: "Record a checkpoint of the ledger under refs/intentgate/checkpoints",
		Long: `seal verifies the ledger, then records a checkpoint of it as a commit on the
git ref refs/intentgate/checkpoints (in the repository's object store, outside
any file an agent can edit): the number of complete lines, their byte count,
the SHA-256 of those bytes (check it with head -c BYTES agent_trace.jsonl |
sha256sum) and the hash of every line since the previous checkpoint. From then
on verify proves the ledger only grew: a truncation, rollback, rewrite, or any
edit, deletion, insertion or reordering of sealed lines is named exactly.

It refuses a ledger that does not verify (a checkpoint would bless the
damage) unless --force.

The ref lives in .git, which a shell on this machine can rewrite; seal also
keeps the checkpoint's digest in intentgate's directory under the user's
configuration directory, outside the workspace, and verify reports a ref that
lost it. --push [REMOTE] (default origin) then sends the ref to the team's
remote, fast-forward only, so that the shared repository is the anchor: verify
fetches the remote's checkpoints and holds the ledger against them too. Set
receive.denyDeletes on that remote so that no one can delete the ref there.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if o.push == "" {
					return fmt.Errorf("unexpected argument %q: seal takes a remote only after --push", args[0])
				}
				o.push = args[0]
			}
			return runTraceSeal(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.add(cmd, true)
	cmd.Flags().BoolVar(&o.force, "force", false, "seal even a ledger that does not verify")
	cmd.Flags().BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	cmd.Flags().StringVar(&o.push, "push", "", "after sealing, push refs/intentgate/checkpoints to this git remote (origin when no name is given)")
	cmd.Flags().Lookup("push").NoOptDefVal = "origin"
	return cmd
}

func runTraceSeal(o *traceSealOptions, out, errw io.Writer) error {
	bar, progress := traceNewProgress(errw, "seal", o.progress)
	cp, rep, err := audit.Seal(audit.SealOptions{Workspace: o.workspace, Ledger: o.ledger, Force: o.force, Progress: progress, Remote: o.push})
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
	if o.push != "" {
		if err := audit.PushCheckpoints(o.workspace, o.push); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("sealed, but not pushed: %w", err)}
		}
		fmt.Fprintf(out, "pushed %s to %s\n", audit.CheckpointRef, o.push)
	}
	return nil
}
