//go:build unix

package files

import (
	"path/filepath"
	"strings"
)

// within reports whether the absolute path p is dir or beneath it.
func within(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func splitPath(p string) []string {
	var out []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// fromURIPath is the file path of a file: URI's path, which PathOf has
// checked to begin with "/"; on Unix, the path itself.
func fromURIPath(p string) (string, bool) { return p, true }

// uriPath is the path of the file: URI of the absolute path p.
func uriPath(p string) string { return filepath.ToSlash(p) }
