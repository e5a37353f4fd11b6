//go:build windows

package fileinfo

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// Links is not in a Windows FileInfo: every file counts as one link. The
// checks that matter open the file and use LinkedFile, which asks the
// handle.
func Links(fs.FileInfo) uint64 { return 1 }

// fileLinks asks the open file's handle how many names the file has; a
// handle that cannot say counts as many, so the file is refused.
func fileLinks(f *os.File, _ fs.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 2
	}
	return uint64(info.NumberOfLinks)
}
