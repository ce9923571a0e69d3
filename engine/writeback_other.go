//go:build !linux

package engine

import "os"

// datasync is a full sync here.
func datasync(f *os.File) error { return f.Sync() }
