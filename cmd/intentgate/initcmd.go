package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/spf13/cobra"
)

const exampleIntents = `# Intents: what agents may work on, and where.
#
# An agent must call select_active_intent with one of these ids before it may
# change anything, and may then change only files matching owned_scope
# (doublestar globs, relative to the workspace root, "/" separated).
#
# status: PENDING | IN_PROGRESS | BLOCKED | COMPLETED | ABANDONED
# Only IN_PROGRESS intents can be selected. intentgate reloads this file when
# it changes; a broken edit keeps the last good version in force.
active_intents:
  - id: INT-001
    name: Example - replace this with real work
    status: IN_PROGRESS
    owned_scope: ["src/example/**"]
    constraints: ["Keep the public API unchanged"]
    acceptance_criteria: ["go test ./... passes"]
`

const exampleIgnore = `# Paths no agent may modify under any intent (gitignore syntax).
# intentgate's own files, .git and the agents' hook settings are always
# protected and need not be listed.
.env
*.pem
`

// gitignoreLines keep per-machine state out of commits; the ledger and the
// intent map are meant to be committed.
var gitignoreLines = []string{
	".orchestration/sessions/",
	".orchestration/locks/",
	".orchestration/tmp/",
	".orchestration/journal/",
	".orchestration/*.lock",
	".orchestration/*.broken",
	".orchestration/intent_map.json",
	".orchestration/index/",
	".orchestration/intentgate.sock",
	".orchestration/tasks/",
}

var gitattributesLines = []string{
	".orchestration/agent_trace.jsonl merge=union -text",
}

func newInitCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Scaffold .orchestration/, .intentignore and .gitignore entries",
		Long: `init prepares a workspace for intentgate: it writes
.orchestration/active_intents.yaml with a commented example intent, an
.intentignore, and .gitignore entries for per-machine session state.
It never overwrites a file that exists; it only adds missing .gitignore lines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(dir, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&dir, "workspace", "w", ".", "the workspace directory")
	return cmd
}

func runInit(dir string, out io.Writer) error {
	orch := filepath.Join(dir, ".orchestration")
	if err := os.MkdirAll(orch, 0o755); err != nil {
		return err
	}
	for _, f := range []struct{ path, body string }{
		{filepath.Join(orch, "active_intents.yaml"), exampleIntents},
		{filepath.Join(dir, ".intentignore"), exampleIgnore},
	} {
		created, err := createNew(f.path, f.body)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(out, "created %s\n", f.path)
		} else {
			fmt.Fprintf(out, "kept    %s (exists)\n", f.path)
		}
	}
	// Two branches that both appended to the ledger merge by keeping both
	// sides' lines; verify tells such forks from tampering.
	if n, err := ensureLines(filepath.Join(dir, ".gitattributes"), gitattributesLines); err != nil {
		return err
	} else if n > 0 {
		fmt.Fprintf(out, "added %d line(s) to %s\n", n, filepath.Join(dir, ".gitattributes"))
	}
	added, err := ensureLines(filepath.Join(dir, ".gitignore"), gitignoreLines)
	if err != nil {
		return err
	}
	if added > 0 {
		fmt.Fprintf(out, "added %d line(s) to %s\n", added, filepath.Join(dir, ".gitignore"))
	}
	fmt.Fprintln(out, "\nNext: edit .orchestration/active_intents.yaml, then run `intentgate intents list`.")
	return nil
}

// createNew writes path only if nothing is there, atomically.
func createNew(path, body string) (bool, error) {
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	_, err = f.WriteString(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}

// ensureLines appends the lines a file lacks, keeping everything it has.
func ensureLines(path string, lines []string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range lines {
		if !have[l] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return 0, nil
	}
	s := string(b)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	if !have["# intentgate"] {
		s += "# intentgate\n"
	}
	s += strings.Join(add, "\n") + "\n"
	return len(add), fsx.WriteFile(path, []byte(s), 0o644)
}
