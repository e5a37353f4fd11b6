//go:build !unix

package acp

import "io/fs"

const openNonBlocking = 0

// linkCount is not known on this platform: files count as single links.
func linkCount(fs.FileInfo) uint64 { return 1 }
