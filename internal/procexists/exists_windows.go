//go:build windows

package procexists

import (
	"errors"

	"golang.org/x/sys/windows"
)

// exists: the process can be opened and is not yet signalled (exited), or
// it belongs to someone who keeps it from being opened.
func exists(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev == uint32(windows.WAIT_TIMEOUT)
}
