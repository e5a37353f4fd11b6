package terminal

import "syscall"

// sessionAttrs starts the terminal's process in a session of its own (so
// it can be ended as a whole), with the PTY as its controlling terminal,
// and has the kernel send it SIGKILL if ahpd dies first.
func sessionAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Pdeathsig: syscall.SIGKILL}
}
