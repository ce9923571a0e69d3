//go:build !unix

package orchestration

import (
	"errors"
	"os"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
)

// openDirNoFollow has no portable form: CheckIntact checks entry by entry.
func openDirNoFollow(string) (*os.File, fsx.Stamp, time.Duration, error) {
	return nil, fsx.Stamp{}, 0, errors.ErrUnsupported
}
