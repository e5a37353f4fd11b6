//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// allBytes is the length of the locked range, in each of its two 32-bit
// halves: from offset 0, the whole of any file there can be.
const allBytes = ^uint32(0)

// Lock takes an exclusive lock on f, waiting while another holds it.
func Lock(f *os.File) error {
	return lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK)
}

// TryLock takes an exclusive lock on f without waiting: ErrLocked when
// another holds it.
func TryLock(f *os.File) error {
	err := lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrLocked
	}
	return err
}

// Unlock releases f's lock.
func Unlock(f *os.File) error {
	ol := new(windows.Overlapped) // offset 0, as locked
	if err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, ol); err != nil {
		return &os.PathError{Op: "UnlockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}

func lockFileEx(f *os.File, flags uint32) error {
	ol := new(windows.Overlapped) // offset 0
	if err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, allBytes, allBytes, ol); err != nil {
		return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}
