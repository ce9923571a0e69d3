//go:build unix

package engine

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// A full disk or a failing device is an I/O error, never PATH_ESCAPE.
func TestIOErrorsAreNotPathEscape(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		in := &fs.PathError{Op: "open", Path: "src/f.txt", Err: errno}
		for name, got := range map[string]error{
			"swapped":     swapped("src/f.txt", "the file was replaced", in),
			"lstatDenial": lstatDenial("src/f.txt", in),
		} {
			var d *Denial
			if errors.As(got, &d) {
				t.Errorf("%s(%v) = denial %s, want the I/O error", name, errno, d.Code)
			}
			if !errors.Is(got, errno) {
				t.Errorf("%s(%v) = %v, want it to wrap %v", name, errno, got, errno)
			}
		}
	}
	var d *Denial
	if !errors.As(swapped("x", "swap", &fs.PathError{Err: syscall.ELOOP}), &d) || d.Code != PathEscape {
		t.Errorf("ELOOP is no longer PATH_ESCAPE")
	}
}
