//go:build unix

package datadir

import (
	"errors"
	"io/fs"
	"syscall"
)

// processExists reports whether a process with this id exists: signal 0
// reaches it, or it belongs to another user.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// othersMayRead reports whether the file's mode lets other users read it.
func othersMayRead(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o077 != 0 }
