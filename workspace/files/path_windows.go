//go:build windows

package files

import "strings"

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
