//go:build !unix && !windows

package filelock

import (
	"errors"
	"os"
)

// Lock fails: this platform has no file locks.
func Lock(*os.File) error { return errors.ErrUnsupported }

// TryLock fails: this platform has no file locks.
func TryLock(*os.File) error { return errors.ErrUnsupported }

// Unlock fails: this platform has no file locks.
func Unlock(*os.File) error { return errors.ErrUnsupported }
