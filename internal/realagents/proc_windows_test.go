//go:build windows

package realagents_test

import (
	"os"

	"golang.org/x/sys/windows"
)

// processExists reports whether the process pid exists and has not
// exited.
func processExists(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// killProcessGroup kills the agent process pid; ahpd ends the rest of its
// job object when it sees the agent die.
func killProcessGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
