//go:build unix

package datadir

import "io/fs"

// othersMayRead reports whether the file's mode lets other users read it.
func othersMayRead(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o077 != 0 }
