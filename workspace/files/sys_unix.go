//go:build unix

package files

import (
	"io/fs"
	"os"
	"syscall"
)

// openDir opens a directory for listing; anything else fails (ENOTDIR),
// and a FIFO swapped in does not block the open.
func openDir(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

// fileIdentity is the part of an ETag that tells a file from another one
// put in its place: the inode.
func fileIdentity(fi fs.FileInfo) uint64 {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return ino
}

// sysErr is err as osErr classifies it: on Unix, the error itself.
func sysErr(err error) error { return err }
