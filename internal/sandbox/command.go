package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// initArg is the hidden first argument with which the intentgate binary runs
// as the init of a confined command.
const initArg = "__intentgate-sandbox-init"

// Main runs the confined command's init when the process was started as one,
// and never returns then.
func Main() {
	if len(os.Args) > 2 && os.Args[1] == initArg {
		os.Exit(initMain(os.Args[2]))
	}
}

// The init is the program that linked this package, re-executed: every
// program that confines commands (intentgate, and the test binaries of every
// package that runs execute_command) must become the init when started as
// one, before anything else runs. An init function is the one place that
// holds for all of them; it does nothing unless the hidden argument is there.
func init() { Main() }

// Refusals picks from a command's output the lines in which it reports a
// write the sandbox refused, for the record; what the command says is its
// own, so this is a report, never a decision.
func Refusals(output string) []string {
	var out []string
	for _, line := range strings.Split(output, "\n") {
		if strings.Contains(line, "Read-only file system") || strings.Contains(line, "Permission denied") ||
			strings.Contains(line, "Operation not permitted") {
			out = append(out, strings.TrimSpace(line))
			if len(out) == 20 {
				break
			}
		}
	}
	return out
}

// RefusedPath guesses, from one line of Refusals, the path whose write was
// refused, in the forms the usual tools print it:
//
//	sh: 1: cannot create docs/x: Permission denied
//	touch: cannot touch 'docs/x': Read-only file system
//	bash: line 1: docs/x: Permission denied
//	mkdir: cannot create directory ‘.codex’: Permission denied
//
// It returns "" when no path can be told. The line is the command's own
// words, so the path is a report, never a decision.
func RefusedPath(line string) string {
	for _, q := range [][2]string{{"'", "'"}, {"\u2018", "\u2019"}, {"\"", "\""}} {
		if i := strings.Index(line, q[0]); i >= 0 {
			rest := line[i+len(q[0]):]
			if j := strings.Index(rest, q[1]); j > 0 {
				return rest[:j]
			}
		}
	}
	// The field before the error text: "prog: [line N: ]path: error".
	fields := strings.Split(line, ": ")
	for i := len(fields) - 2; i >= 1; i-- {
		f := strings.TrimSpace(fields[i])
		f = strings.TrimPrefix(f, "cannot create ")
		if f == "" || strings.HasPrefix(f, "line ") || strings.HasPrefix(f, "cannot ") || strings.ContainsAny(f, " \t") {
			if strings.HasPrefix(f, "line ") || f == "" {
				return ""
			}
			continue
		}
		if _, err := strconv.Atoi(f); err == nil {
			return "" // sh's line number: no path before it
		}
		return f
	}
	return ""
}

// Mechanism says how commands are confined on this system.
type Mechanism string

const (
	// Namespaces: user, mount and PID namespaces with Landlock (Linux).
	Namespaces Mechanism = "namespaces+landlock"
	// LandlockOnly: Landlock and a subreaper init, where user namespaces
	// are unavailable (Linux).
	LandlockOnly Mechanism = "landlock"
	// Seatbelt: a sandbox-exec profile (macOS).
	Seatbelt Mechanism = "seatbelt"
	// None: no confinement is possible here.
	None Mechanism = "none"
)

// forceMech overrides the probe, for tests of each mechanism.
var forceMech Mechanism

// Available reports how commands would be confined here, and if not at
// all, why.
func Available() (Mechanism, string) { return probe() }

// Command prepares argv to run in dir under p. The returned cleanup removes
// the command's private temporary directory; call it after the command ended.
// Cancelling ctx stops the command and everything it started.
//
// When no confinement is possible, Command fails with ErrUnavailable, unless
// p.AllowUnconfined, when the command runs as is, in its own process group.
func Command(ctx context.Context, p *Policy, dir string, argv []string) (*exec.Cmd, func(), error) {
	if len(argv) == 0 {
		return nil, nil, fmt.Errorf("no command to run")
	}
	mech, why := probe()
	if forceMech != "" {
		mech, why = forceMech, "forced by a test"
	}
	if mech == None {
		if !p.AllowUnconfined {
			return nil, nil, fmt.Errorf("%w: %s; commands are refused rather than run unconfined (a team that accepts the risk sets sandbox.allow_unconfined: true in .orchestration/config.yaml)", ErrUnavailable, why)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		unconfined(cmd)
		return cmd, func() {}, nil
	}
	temp, err := os.MkdirTemp("", "intentgate-cmd-")
	if err != nil {
		return nil, nil, fmt.Errorf("the command's private temporary directory: %w", err)
	}
	cmd, err := confined(ctx, mech, p, dir, temp, argv)
	if err != nil {
		os.RemoveAll(temp)
		return nil, nil, err
	}
	cmd.Env = withEnv(cmd.Environ(), "TMPDIR", temp)
	return cmd, func() { forgetStatus(cmd); os.RemoveAll(temp) }, nil
}

// Shell is Command for a shell command line.
func Shell(ctx context.Context, p *Policy, dir, command string) (*exec.Cmd, func(), error) {
	return Command(ctx, p, dir, shellArgv(command))
}

func withEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
