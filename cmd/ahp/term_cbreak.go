//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// cbreak clears ICANON and ECHO on f with the platform's get and set
// requests.
func cbreak(f *os.File, get, set uintptr) (func(), error) {
	var old syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), get, uintptr(unsafe.Pointer(&old))); errno != 0 {
		return nil, errno
	}
	t := old
	t.Lflag &^= syscall.ICANON | syscall.ECHO
	t.Cc[syscall.VMIN], t.Cc[syscall.VTIME] = 1, 0
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), set, uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, errno
	}
	return func() {
		syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), set, uintptr(unsafe.Pointer(&old)))
	}, nil
}

// termWidth returns the width of the terminal f in columns, 0 when f is no
// terminal.
func termWidth(f *os.File) int {
	var ws struct{ rows, cols, x, y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.cols)
}
