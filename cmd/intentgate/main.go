// Command intentgate is governance middleware for AI coding agents.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := newRoot(os.Stdin, os.Stdout, os.Stderr).Execute(); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "intentgate:", err)
		}
		os.Exit(exitCode(err))
	}
}
