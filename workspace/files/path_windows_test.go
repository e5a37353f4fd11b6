//go:build windows

package files

import "testing"

func TestWindowsPaths(t *testing.T) {
	for _, c := range []struct {
		uri, path string
		ok        bool
	}{
		{"file:///C:/Users/me/a.txt", `C:\Users\me\a.txt`, true},
		{"file:///c%3A/Users/me", `c:\Users\me`, true},
		{"file:///D:", `D:\`, true},
		{"file://localhost/C:/x/./y", `C:\x\y`, true},
		{"file:///Users/me", "", false},
		{"file:///C:relative", "", false},
		{"file:///C:/a%5Cb", "", false},
		{"file:///C:/a/../b", "", false},
	} {
		got, err := PathOf(c.uri)
		if (err == nil) != c.ok || got != c.path {
			t.Errorf("PathOf(%q) = %q, %v; want %q, ok %v", c.uri, got, err, c.path, c.ok)
		}
		if c.ok && URIOf(got) == "" {
			t.Errorf("URIOf(%q) is empty", got)
		}
	}
	if got, want := URIOf(`C:\Users\me`), "file:///C:/Users/me"; got != want {
		t.Errorf("URIOf = %q, want %q", got, want)
	}
	for _, c := range []struct {
		dir, p string
		in     bool
	}{
		{`C:\`, `C:\x`, true},
		{`C:\a`, `C:\a`, true},
		{`C:\a`, `C:\a\b`, true},
		{`C:\a`, `C:\ab`, false},
		{`C:\a`, `D:\a\b`, false},
	} {
		if got := within(c.dir, c.p); got != c.in {
			t.Errorf("within(%q, %q) = %v", c.dir, c.p, got)
		}
	}
}
