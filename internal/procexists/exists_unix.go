//go:build unix

package procexists

import (
	"errors"
	"syscall"
)

// exists: signal 0 reaches the process, or it belongs to another user.
func exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
