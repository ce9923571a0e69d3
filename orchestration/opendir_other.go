//go:build !unix

package orchestration

import (
	"errors"
	"os"
)

// openDirNoFollow has no portable form: CheckIntact checks entry by entry.
func openDirNoFollow(string) (*os.File, error) { return nil, errors.ErrUnsupported }
