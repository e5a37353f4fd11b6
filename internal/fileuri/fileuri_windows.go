//go:build windows

package fileuri

import (
	"path/filepath"
	"strings"
)

// URIPath is the path of the file: URI of the absolute path p:
// C:\Users\me is /C:/Users/me.
func URIPath(p string) string {
	s := filepath.ToSlash(p)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s
}

// FromURIPath is the local path a file: URI's (unescaped) path names, and
// whether it is absolute. Only a path on a drive is: "/C:/Users/me" is
// C:\Users\me and "/C:" the drive's root, while "/Users/me", without a
// drive, "/C:relative", and paths with backslashes (which a file: URI
// spells as slashes) are not.
func FromURIPath(s string) (string, bool) {
	p, ok := strings.CutPrefix(s, "/")
	if !ok || len(p) < 2 || p[1] != ':' || !isLetter(p[0]) || (len(p) > 2 && p[2] != '/') {
		return "", false
	}
	if strings.ContainsRune(p, '\\') {
		return "", false
	}
	if len(p) == 2 {
		p += "/" // the drive's root, not its current directory
	}
	return filepath.FromSlash(p), true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
