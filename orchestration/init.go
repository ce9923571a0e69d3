package orchestration

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/intentgate/intentgate/internal/fsx"
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

// GitignoreLines are the .gitignore lines Init adds: the per-machine state
// under .orchestration/. The caller owns the slice.
func GitignoreLines() []string { return slices.Clone(gitignoreLines) }

// InitStep is what Init did to one file.
type InitStep struct {
	Path string
	// Created: the file was written; otherwise it existed and was kept,
	// unless lines were added to it.
	Created bool
	// Added is how many lines were appended (.gitignore, .gitattributes).
	Added int
	// Lines: the file is one Init adds lines to, rather than creates.
	Lines bool
}

// Init prepares dir for governance: .orchestration/active_intents.yaml with
// a commented example intent and an .intentignore, each only if absent;
// the .gitattributes line that lets two branches' ledgers merge, and the
// .gitignore lines for per-machine state, each only if missing. It never
// overwrites a file.
func Init(dir string) ([]InitStep, error) {
	orch := filepath.Join(dir, DirName)
	if err := os.MkdirAll(orch, 0o755); err != nil {
		return nil, err
	}
	var steps []InitStep
	for _, f := range []struct{ path, body string }{
		{filepath.Join(orch, IntentsName), exampleIntents},
		{filepath.Join(dir, ".intentignore"), exampleIgnore},
	} {
		created, err := createNew(f.path, f.body)
		if err != nil {
			return steps, err
		}
		steps = append(steps, InitStep{Path: f.path, Created: created})
	}
	// Two branches that both appended to the ledger merge by keeping both
	// sides' lines; verify tells such forks from tampering.
	for _, f := range []struct {
		path  string
		lines []string
	}{
		{filepath.Join(dir, ".gitattributes"), gitattributesLines},
		{filepath.Join(dir, ".gitignore"), gitignoreLines},
	} {
		n, err := ensureLines(f.path, f.lines)
		if err != nil {
			return steps, err
		}
		steps = append(steps, InitStep{Path: f.path, Added: n, Lines: true})
	}
	return steps, nil
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
