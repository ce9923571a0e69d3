package main

import (
	"strconv"
	"strings"

	"github.com/intentgate/intentgate/internal/hookcmd"
)

// hookArgs reads args as `hook AGENT` with the hook command's flags, and
// reports whether they are exactly that: each flag in a form the command
// tree reads the same way (--workspace DIR, --workspace=DIR, -w DIR, -wDIR,
// --only-governed, --only-governed=BOOL) and one argument that is not a
// flag. Anything else (help, --version, a misspelt flag, a missing value,
// "--", a second argument) is not read here: intentgate-full answers it,
// so that its help and errors are the command tree's own.
func hookArgs(args []string) (o hookcmd.Options, agent string, ok bool) {
	if len(args) < 2 || args[0] != "hook" {
		return o, "", false
	}
	var pos []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "" || a[0] != '-':
			pos = append(pos, a)
		case a == "--workspace" || a == "-w":
			if i+1 >= len(args) {
				return o, "", false
			}
			i++
			o.Workspace = args[i]
		case strings.HasPrefix(a, "--workspace="):
			o.Workspace = a[len("--workspace="):]
		case strings.HasPrefix(a, "-w") && len(a) > 2 && a[2] != '=':
			o.Workspace = a[2:]
		case a == "--only-governed":
			o.OnlyGoverned = true
		case strings.HasPrefix(a, "--only-governed="):
			v, err := strconv.ParseBool(a[len("--only-governed="):])
			if err != nil {
				return o, "", false
			}
			o.OnlyGoverned = v
		default:
			return o, "", false
		}
	}
	if len(pos) != 1 {
		return o, "", false
	}
	return o, pos[0], true
}
