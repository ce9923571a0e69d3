//go:build !unix

package snap

import (
	"os"

	"github.com/intentgate/intentgate/internal/fsx"
)

// createWrite creates p, which must not exist yet, and writes b to it.
func createWrite(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|fsx.NoFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
	}
	return err
}
