//go:build unix

package realagents_test

import "syscall"

// processExists reports whether signal 0 reaches the process pid.
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killProcessGroup kills the process group pid leads.
func killProcessGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
