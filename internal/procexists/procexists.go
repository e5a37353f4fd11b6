// Package procexists tells whether a process is still running, on Unix and
// on Windows.
package procexists

// Exists reports whether a process with this id runs. A process of another
// user, which this one may not signal or open, counts as running.
func Exists(pid int) bool { return exists(pid) }
