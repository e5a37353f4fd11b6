//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// fileID is what the store compares of a file between two checks. The
// checks run twice per batch, so they stat without allocating.
type fileID struct {
	dev, ino uint64
	size     int64
	links    uint64
}

func (a fileID) same(b fileID) bool { return a.dev == b.dev && a.ino == b.ino }

func statPath(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return idOf(&st), nil
}

func statFile(f *os.File) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return idOf(&st), nil
}

func idOf(st *syscall.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, links: uint64(st.Nlink)}
}
