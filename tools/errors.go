package tools

import (
	"errors"
	"io/fs"
)

// unwrapPath drops the *fs.PathError wrapper, whose path is the internal
// handle-relative name rather than the one the agent sent.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
