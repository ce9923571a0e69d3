// Command intentgate is governance middleware for AI coding agents.
//
// An agent starts `intentgate hook AGENT` once per event, and Go runs the
// initialisation of every package a program links before main: a program
// that links the model SDKs, the MCP SDK, the browser driver, go-git and
// the PDF reader takes several times as long to start as one that reads
// stdin and prints JSON. So intentgate links only what a hook event needs
// and answers those (and --version) itself; every other command, and any
// hook command line it does not read exactly as the full command tree
// would, it hands to intentgate-full, installed beside it, with the same
// arguments, environment, standard streams and exit status (on Unix by
// replacing its own process with it).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/intentgate/intentgate/internal/hookcmd"
)

// version is set at build time with -ldflags "-X main.version=...", to the
// same version as intentgate-full's: it is written into ledger records.
var version = "0.1.0-dev"

func main() {
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		// What the command tree prints, without starting it.
		fmt.Printf("intentgate version %s\n", version)
		return
	}
	if o, agent, ok := hookArgs(args); ok {
		os.Exit(hook(o, agent, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(runFull(args, os.Stderr))
}

// hook answers one hook event as `intentgate-full hook` does: its error
// and exit status are those the command tree gives.
func hook(o hookcmd.Options, agent string, in io.Reader, out, errw io.Writer) int {
	err := hookcmd.Run(context.Background(), o, version, agent, in, out, errw)
	if err == nil {
		return 0
	}
	code := 1
	var ee *hookcmd.ExitError
	if errors.As(err, &ee) {
		code, err = ee.Code, ee.Err
	}
	fmt.Fprintln(errw, "intentgate:", err)
	return code
}
