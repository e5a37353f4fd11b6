package fileuri

import (
	"path/filepath"
	"runtime"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	type c struct {
		uriPath, path string
		abs           bool
	}
	cases := []c{
		{"/home/me/a.txt", "/home/me/a.txt", true},
		{"/", "/", true},
		{"relative/x", "relative/x", false},
	}
	if runtime.GOOS == "windows" {
		cases = []c{
			{"/C:/Users/me/a.txt", `C:\Users\me\a.txt`, true},
			{"/d:/", `d:\`, true},
			{"/D:", `D:\`, true},
			{"/Users/me", "", false},
			{"/C:relative", "", false},
			{`/C:/a\b`, "", false},
			{"C:/x", "", false},
		}
	}
	for _, tc := range cases {
		p, abs := FromURIPath(tc.uriPath)
		if abs != tc.abs || (abs && p != tc.path) {
			t.Errorf("FromURIPath(%q) = %q, %v; want %q, %v", tc.uriPath, p, abs, tc.path, tc.abs)
			continue
		}
		if !abs {
			continue
		}
		back, ok := FromURIPath(URIPath(p))
		if !ok || back != filepath.Clean(p) && back != p {
			t.Errorf("FromURIPath(URIPath(%q)) = %q, %v", p, back, ok)
		}
	}
}
