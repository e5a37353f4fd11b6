//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"

	"github.com/ahp-go/ahp/store"
)

// lockDir takes an exclusive lock on the lock file, without waiting. The
// lock goes away with the process, so a killed host leaves none behind.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, store.ErrLocked
		}
		return nil, err
	}
	return f, nil
}

func unlockDir(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// syncDir makes the directory's entries (a rename, a new file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
