//go:build unix

package acp

import (
	"io/fs"
	"syscall"
)

// openNonBlocking makes opening a FIFO return at once instead of waiting
// for a writer; it changes nothing for regular files.
const openNonBlocking = syscall.O_NONBLOCK

// linkCount returns the number of hard links of a file.
func linkCount(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}
