//go:build windows

package sqlite

import (
	"errors"
	"os"

	"github.com/ahp-go/ahp/internal/filelock"
	"github.com/ahp-go/ahp/store"
)

// lockDir takes an exclusive lock (LockFileEx) on the lock file, without
// waiting. The lock goes away with the process, so a killed host leaves
// none behind.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, store.ErrLocked
		}
		return nil, err
	}
	return f, nil
}

func unlockDir(f *os.File) {
	filelock.Unlock(f)
	f.Close()
}

// syncDir does nothing: Windows cannot flush a directory, and NTFS
// journals a rename's metadata itself.
func syncDir(string) error { return nil }
