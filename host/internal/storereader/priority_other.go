//go:build !linux

package storereader

// backgroundThread does nothing where a thread's priority cannot be set
// apart from its process's: the reads run at normal priority.
func backgroundThread() error { return nil }
