//go:build !linux

package engine

import "os"

// aioBatch has no counterpart here: StartSync uses goroutines.
type aioBatch struct{}

func (*aioBatch) start([]*os.File, []error) bool { return false }
func (*aioBatch) wait([]*os.File, []error)       {}
