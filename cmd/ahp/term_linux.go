package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal: whether it answers the
// request for terminal attributes (as /dev/null, a character device too,
// does not).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// setCbreak turns off line editing and echo on the terminal f, keeping
// signals (Ctrl-C) and output processing, so that ahp sees each key; the
// returned function restores the terminal.
func setCbreak(f *os.File) (func(), error) {
	return cbreak(f, syscall.TCGETS, syscall.TCSETS)
}
