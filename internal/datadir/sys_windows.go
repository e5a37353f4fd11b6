//go:build windows

package datadir

import "io/fs"

// othersMayRead is false: Windows has no mode bits for other users (a
// FileInfo shows every writable file as 0666). Who may read the token file
// is up to the access list of the directory it is in, which for the
// default data directory, under %LocalAppData%, is its user alone.
func othersMayRead(fs.FileInfo) bool { return false }
