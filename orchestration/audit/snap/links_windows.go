//go:build windows

package snap

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openedLinks is the number of names of the opened file f: a Windows
// FileInfo does not carry it, the handle is asked.
func openedLinks(f *os.File, _ fs.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 2 // unknown: refused as if linked
	}
	return uint64(info.NumberOfLinks)
}
