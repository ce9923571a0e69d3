//go:build windows

package engine

import (
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

const openNoFollow = 0

// linkCount asks the file system, because os.FileInfo on Windows does not
// carry the number of links.
func linkCount(fi fs.FileInfo) uint64 {
	_ = fi
	return 1
}

func linkCountPath(path string) (uint32, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, err := windows.CreateFile(p, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return 0, err
	}
	return info.NumberOfLinks, nil
}

// Drive letters other than the workspace's, UNC paths and device paths are
// absolute and fall outside the root; reserved device names are refused.
func checkPlatformSyntax(p string) error {
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `//`) {
		return invalid(p, "UNC and device paths are not workspace paths")
	}
	if v := filepath.VolumeName(p); v != "" && !filepath.IsAbs(p) {
		return invalid(p, "drive-relative paths such as C:x are ambiguous")
	}
	if strings.ContainsAny(p, `<>"|?*`) || strings.Contains(p[len(filepath.VolumeName(p)):], ":") {
		return invalid(p, "the path contains a character Windows does not allow in names")
	}
	return nil
}

func syncDirFile(f *os.File) error { return nil }

func readRandom(b []byte) (int, error) { return rand.Read(b) }

const (
	syscallEMFILE = windows.ERROR_TOO_MANY_OPEN_FILES
	syscallENFILE = windows.ERROR_TOO_MANY_OPEN_FILES
)
