//go:build unix

package fileinfo

import (
	"io/fs"
	"syscall"
)

// Links returns the number of hard links of a file; 1 when the platform
// does not say.
func Links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
