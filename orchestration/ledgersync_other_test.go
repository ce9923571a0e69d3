//go:build !unix

package orchestration

import "errors"

func ledgerTestMkfifo(string) error { return errors.ErrUnsupported }
