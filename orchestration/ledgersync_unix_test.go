//go:build unix

package orchestration

import "syscall"

func ledgerTestMkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
