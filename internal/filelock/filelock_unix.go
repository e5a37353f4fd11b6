//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on f, waiting while another holds it.
func Lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}

// TryLock takes an exclusive lock on f without waiting: ErrLocked when
// another holds it. An interrupted call (EINTR) is returned as it is.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Unlock releases f's lock.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
