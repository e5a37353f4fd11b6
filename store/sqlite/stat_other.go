//go:build !unix

package sqlite

import (
	"io/fs"
	"os"
)

// fileID is what the store compares of a file between two checks.
type fileID struct {
	fi    fs.FileInfo
	size  int64
	links uint64
}

func (a fileID) same(b fileID) bool { return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) }

func statPath(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	return fileID{fi: fi, size: fi.Size(), links: 1}, nil
}

func statFile(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	return fileID{fi: fi, size: fi.Size(), links: 1}, nil
}
