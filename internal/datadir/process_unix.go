//go:build unix

package datadir

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with this id exists: signal 0
// reaches it, or it belongs to another user.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
