//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import (
	"errors"
	"os"
)

// isTerminal reports whether f is a character device, as terminals are.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// setCbreak is not available here: chat reads whole lines.
func setCbreak(*os.File) (func(), error) {
	return nil, errors.New("no terminal control on this system")
}

// termWidth is unknown here.
func termWidth(*os.File) int { return 0 }
