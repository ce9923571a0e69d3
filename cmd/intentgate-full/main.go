// Command intentgate-full is governance middleware for AI coding agents,
// with every command: intentgate runs it, installed beside it, for every
// command but hook.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/intentgate/intentgate/internal/timerslack"
)

func main() {
	timerslack.Relax(os.Args[1:])
	if err := command(os.Args[1:], os.Stdin, os.Stdout, os.Stderr).Execute(); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "intentgate:", err)
		}
		os.Exit(exitCode(err))
	}
}

// command is the root command for the command line args. An agent starts
// "intentgate hook AGENT" once per event, so that process builds the root
// with the hook command alone, not the whole tree of commands and their
// flags: its arguments, flags, help and errors are those of the full tree.
func command(args []string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	if len(args) > 0 && args[0] == "hook" {
		return newRootOf(newHookCmd, stdin, stdout, stderr)
	}
	return newRoot(stdin, stdout, stderr)
}
