//go:build unix && !linux

package terminal

import "syscall"

// sessionAttrs starts the terminal's process in a session of its own (so
// it can be ended as a whole), with the PTY as its controlling terminal.
// Only Linux can have it killed when ahpd dies; elsewhere it gets SIGHUP
// when the PTY closes with ahpd, as a shell does when its window closes.
func sessionAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true}
}
