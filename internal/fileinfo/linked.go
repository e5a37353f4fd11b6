package fileinfo

import (
	"io/fs"
	"os"
)

// Linked reports whether fi is a regular file with more than one hard
// link, and how many it has. Such a file may have another name outside a
// confining directory, so reading or writing it through the name inside
// would reach past the confinement; directories, whose link counts count
// their subdirectories, are never Linked.
func Linked(fi fs.FileInfo) (links uint64, linked bool) {
	if !fi.Mode().IsRegular() {
		return 0, false
	}
	n := Links(fi)
	return n, n > 1
}

// LinkedFile is Linked for the open file f, whose FileInfo is fi. Where a
// FileInfo does not count links (Windows), the open handle is asked.
func LinkedFile(f *os.File, fi fs.FileInfo) (links uint64, linked bool) {
	if !fi.Mode().IsRegular() {
		return 0, false
	}
	n := fileLinks(f, fi)
	return n, n > 1
}
