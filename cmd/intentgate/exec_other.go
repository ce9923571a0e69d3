//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
)

const isWindows = true

// execFull runs intentgate-full as a child with this process's arguments,
// environment and standard streams, and exits with its status. An interrupt
// reaches both processes from the console: this one leaves the decision to
// the child. The child ends with this process, however this one ends
// (killChildrenWithUs).
func execFull(full string, args []string) error {
	killChildrenWithUs()
	cmd := exec.Command(full, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if code < 0 {
			code = 1
		}
		os.Exit(code)
	}
	if err != nil {
		return err
	}
	os.Exit(0)
	return nil
}
