//go:build !linux && !darwin

package orchestration

import "os"

// ledgerStatKey has no portable form (on Windows a path's size and times
// may lag behind a handle open for writing): every append reads the
// ledger's tail, and every append fsyncs for itself.
func ledgerStatKey(os.FileInfo) (ledgerKey, bool) { return ledgerKey{}, false }
