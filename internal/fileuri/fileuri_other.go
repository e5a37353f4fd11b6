//go:build !windows

package fileuri

import "path/filepath"

// URIPath is the path of the file: URI of the absolute path p.
func URIPath(p string) string { return filepath.ToSlash(p) }

// FromURIPath is the local path a file: URI's (unescaped) path names, and
// whether it is absolute.
func FromURIPath(s string) (string, bool) { return filepath.FromSlash(s), filepath.IsAbs(s) }
