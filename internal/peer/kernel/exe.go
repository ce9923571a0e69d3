//go:build linux || darwin

package kernel

import (
	"errors"
	"io/fs"
	"os"
)

// sameAsOneOf fails unless pf is the file at one of paths.
func sameAsOneOf(pf fs.FileInfo, paths []string) error {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && os.SameFile(pf, fi) {
			return nil
		}
	}
	return errors.New("the socket's process runs another executable")
}
