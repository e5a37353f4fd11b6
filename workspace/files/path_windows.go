//go:build windows

package files

import (
	"path/filepath"
	"strings"
)

// within reports whether the absolute path p is dir or beneath it. Names
// are compared as they are spelled: a path that differs from its root in
// letter case only is outside it, which refuses more, never less.
func within(dir, p string) bool {
	if strings.HasSuffix(dir, `\`) { // a drive's root, C:\
		return strings.HasPrefix(p, dir)
	}
	return p == dir || strings.HasPrefix(p, dir+`\`)
}

// splitPath splits a relative path at either kind of slash.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
}

// fromURIPath is the file path of a file: URI's path, which PathOf has
// checked to begin with "/". On Windows only a path on a drive is
// absolute: "/C:/Users/me" is C:\Users\me, and "/Users/me", without a
// drive, is refused (ok false), as are backslashes, which a file: URI
// spells as slashes.
func fromURIPath(p string) (string, bool) {
	p = p[1:]
	if len(p) < 2 || p[1] != ':' || !isLetter(p[0]) || (len(p) > 2 && p[2] != '/') {
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

// uriPath is the path of the file: URI of the absolute path p:
// C:\Users\me is /C:/Users/me.
func uriPath(p string) string {
	s := filepath.ToSlash(p)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s
}
