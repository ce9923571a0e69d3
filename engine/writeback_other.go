//go:build !linux

package engine

import "os"

// startWriteback has no portable form; the fsyncs of syncTogether still run
// at the same time.
func startWriteback(*os.File) {}

// datasync is a full sync here.
func datasync(f *os.File) error { return f.Sync() }
