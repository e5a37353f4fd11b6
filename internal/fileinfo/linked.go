package fileinfo

import "io/fs"

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
