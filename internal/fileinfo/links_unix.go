//go:build unix

package fileinfo

import (
	"io/fs"
	"os"
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

// fileLinks is Links: the FileInfo of an open file counts its links.
func fileLinks(_ *os.File, fi fs.FileInfo) uint64 { return Links(fi) }
