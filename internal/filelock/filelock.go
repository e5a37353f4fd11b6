// Package filelock takes whole-file exclusive locks on open files: flock(2)
// on Unix, LockFileEx on Windows.
//
// The two differ in force. A flock is advisory: it keeps out only other
// lockers. A Windows lock is mandatory: while it is held, reads and writes
// of the file through any other handle fail, while the handle that holds it
// reads and writes as usual. Callers lock a file only around the work that
// must not interleave with another locker's.
//
// A lock belongs to the open file and goes away when the file is closed or
// the process ends, so a killed process leaves none behind.
package filelock

import "errors"

// ErrLocked is what TryLock returns when another open file holds the lock.
var ErrLocked = errors.New("the file is locked by another process or handle")
