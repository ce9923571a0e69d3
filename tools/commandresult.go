package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// signalError says the command was killed by a signal.
type signalError struct {
	name string
	core bool
}

func (e *signalError) Error() string { return "terminated by signal " + e.name }

// commandResultText is what the model reads after a command, in Roo Code's
// words: where it ran, a separate line saying it was not successful when
// its exit code is not 0, the exit code, then its output compressed.
func commandResultText(dir, output string, code int, runErr error, timeout time.Duration, lineLimit, charLimit int) string {
	var sig *signalError
	switch {
	case errors.Is(runErr, errCommandTimeout):
		return fmt.Sprintf("The command was terminated after exceeding a user-configured %ss timeout. Do not try to re-run the command.\n",
			strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	case errors.Is(runErr, context.Canceled):
		return "The command was aborted before it finished; it and everything it started were stopped.\n"
	case errors.As(runErr, &sig):
		status := "Process terminated by signal " + sig.name
		if sig.core {
			status += " - core dump possible"
		}
		return commandExecuted(dir, status, output, lineLimit, charLimit)
	case runErr != nil:
		return fmt.Sprintf("Command could not run: %v\n", runErr)
	}
	status := fmt.Sprintf("Exit code: %d", code)
	if code != 0 {
		status = "Command execution was not successful, inspect the cause and adjust as needed.\n" + status
	}
	return commandExecuted(dir, status, output, lineLimit, charLimit)
}

func commandExecuted(dir, status, output string, lineLimit, charLimit int) string {
	out := CompressTerminalOutput(output, lineLimit, charLimit)
	// Roo's text has the two spaces before "within", as it is.
	s := fmt.Sprintf("Command executed in terminal  within working directory '%s'. %s\nOutput:\n%s",
		filepath.ToSlash(dir), status, out)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
