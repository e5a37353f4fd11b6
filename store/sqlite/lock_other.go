//go:build !unix && !windows

package sqlite

import "os"

// lockDir only creates the lock file: on systems without flock the
// directory is not protected against a second process (SQLite's own
// locking still keeps the database consistent).
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func unlockDir(f *os.File) { f.Close() }

// syncDir does nothing: directories cannot be synced here, and a rename
// is durable once the file system commits it.
func syncDir(string) error { return nil }
