// Command intentgate-hook is `intentgate hook AGENT` as a program of its
// own: an agent starts one process per hook event, and this one links only
// what answering an event needs (package hookcmd), as intentgate itself
// does (it runs intentgate-full for its other commands). Its arguments,
// answers and records are those of `intentgate hook`; `intentgate install`
// writes it into an agent's settings when it lies beside the intentgate
// executable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/intentgate/intentgate/internal/hookcmd"
)

// version is set at build time with -ldflags "-X main.version=...", to the
// same version as intentgate's: it is written into ledger records.
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `Usage:
  intentgate-hook AGENT [flags]

Flags:
  -h, --help               help for intentgate-hook
      --only-governed      %s
  -w, --workspace string   %s
      --version            print the version
`

func run(args []string, in io.Reader, out, errw io.Writer) int {
	o, agent, err := parse(args)
	switch {
	case errors.Is(err, errHelp):
		fmt.Fprintf(out, "%s\n\nThis is `intentgate hook` as a program of its own, which links only what an event needs.\n\n", hookcmd.Long())
		fmt.Fprintf(out, usage, hookcmd.OnlyGovernedUsage, hookcmd.WorkspaceUsage)
		return 0
	case errors.Is(err, errVersion):
		fmt.Fprintf(out, "intentgate-hook version %s\n", version)
		return 0
	case err != nil:
		fmt.Fprintf(errw, "intentgate-hook: %v\nRun 'intentgate-hook --help' for usage.\n", err)
		return 1
	}
	err = hookcmd.Run(context.Background(), o, version, agent, in, out, errw)
	var ee *hookcmd.ExitError
	if errors.As(err, &ee) {
		fmt.Fprintln(errw, "intentgate-hook:", ee.Err)
		return ee.Code
	}
	if err != nil {
		fmt.Fprintln(errw, "intentgate-hook:", err)
		return 1
	}
	return 0
}

var (
	errHelp    = errors.New("help requested")
	errVersion = errors.New("version requested")
)

// parse reads the flags of `intentgate hook` (anywhere among the
// arguments, as intentgate's command line takes them) and its one argument.
func parse(args []string) (o hookcmd.Options, agent string, err error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		long := strings.HasPrefix(a, "--")
		if !long && len(name) > 1 && !hasVal {
			// -wDIR: a shorthand with its value attached.
			name, val, hasVal = name[:1], name[1:], true
		}
		switch {
		case name == "help" && long, name == "h" && !long:
			return o, "", errHelp
		case name == "version" && long:
			return o, "", errVersion
		case name == "only-governed" && long:
			o.OnlyGoverned = true
			if hasVal {
				if o.OnlyGoverned, err = strconv.ParseBool(val); err != nil {
					return o, "", fmt.Errorf("invalid argument %q for %q flag: %v", val, "--only-governed", err)
				}
			}
		case name == "workspace" && long, name == "w" && !long:
			if !hasVal {
				if i+1 >= len(args) {
					if long {
						return o, "", fmt.Errorf("flag needs an argument: --%s", name)
					}
					return o, "", fmt.Errorf("flag needs an argument: 'w' in -w")
				}
				i++
				val = args[i]
			}
			o.Workspace = val
		case long:
			return o, "", fmt.Errorf("unknown flag: --%s", name)
		default:
			return o, "", fmt.Errorf("unknown shorthand flag: %q in %s", name[:1], a)
		}
	}
	if len(pos) != 1 {
		return o, "", fmt.Errorf("accepts 1 arg(s), received %d", len(pos))
	}
	return o, pos[0], nil
}
