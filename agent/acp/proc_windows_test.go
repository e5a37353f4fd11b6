//go:build windows

package acp_test

import (
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/ahp-go/ahp/internal/procexists"
)

// exits waits until the process pid ends, or the timeout passes, and
// reports whether it ended: a process handle is signalled when the
// process terminates.
func exits(t *testing.T, pid int, timeout time.Duration) bool {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return true // gone
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, uint32(timeout.Milliseconds()))
	if err != nil {
		t.Fatalf("waiting for process %d: %v", pid, err)
	}
	return ev == windows.WAIT_OBJECT_0
}

// alive reports whether the process pid exists and has not exited.
func alive(pid int) bool { return procexists.Exists(pid) }
