//go:build unix

package realagents_test

import "syscall"

// killProcessGroup kills the process group pid leads.
func killProcessGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
