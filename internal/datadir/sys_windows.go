//go:build windows

package datadir

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/windows"
)

// processExists reports whether a process with this id runs: it can be
// opened and is not yet signalled (exited), or it belongs to someone who
// keeps it from being opened.
func processExists(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev == uint32(windows.WAIT_TIMEOUT)
}

// othersMayRead is false: Windows has no mode bits for other users (a
// FileInfo shows every writable file as 0666). Who may read the token file
// is up to the access list of the directory it is in, which for the
// default data directory, under %LocalAppData%, is its user alone.
func othersMayRead(fs.FileInfo) bool { return false }
