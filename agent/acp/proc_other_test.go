//go:build unix && !linux

package acp_test

import (
	"syscall"
	"testing"
	"time"
)

// exits waits until the process pid ends, or the timeout passes, and
// reports whether it ended. Without Linux's pidfd there is nothing to wait
// on for a process that is not our child, so this asks the kernel every
// few milliseconds.
func exits(t *testing.T, pid int, timeout time.Duration) bool {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for alive(pid) {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// alive reports whether the process pid exists (a zombie counts).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
