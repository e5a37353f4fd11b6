package fileinfo

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		mode fs.FileMode
		want string
	}{
		{fs.ModeDir, "a directory"},
		{fs.ModeNamedPipe, "a named pipe"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice, "a device"},
		{fs.ModeDevice | fs.ModeCharDevice, "a device"},
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeIrregular, "a special file (?---------)"},
	} {
		if got := Kind(tc.mode); got != tc.want {
			t.Errorf("Kind(%v) = %q, want %q", tc.mode, got, tc.want)
		}
	}
}

func TestLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Windows FileInfo does not count links: TestLinkedFile covers Windows")
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if n := Links(fi); n != 1 {
		t.Fatalf("one name: %d links", n)
	}
	if err := os.Link(a, filepath.Join(dir, "b")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if fi, err = os.Stat(a); err != nil {
		t.Fatal(err)
	}
	if n := Links(fi); n != 2 {
		t.Fatalf("two names: %d links", n)
	}
}

func TestLinked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Windows FileInfo does not count links: TestLinkedFile covers Windows")
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	check := func(name string, path string, wantN uint64, want bool) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := Linked(fi); n != wantN || ok != want {
			t.Errorf("%s: Linked = %d, %v; want %d, %v", name, n, ok, wantN, want)
		}
	}
	check("one name", a, 1, false)
	// A directory with a subdirectory has several links but is not Linked.
	check("directory", sub, 0, false)
	if err := os.Link(a, filepath.Join(dir, "b")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	check("two names", a, 2, true)
}

// LinkedFile counts the names of an open file, on every platform.
func TestLinkedFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(name, path string, wantN uint64, want bool) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := LinkedFile(f, fi); n != wantN || ok != want {
			t.Errorf("%s: LinkedFile = %d, %v; want %d, %v", name, n, ok, wantN, want)
		}
	}
	check("one name", a, 1, false)
	check("directory", dir, 0, false)
	if err := os.Link(a, filepath.Join(dir, "b")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	check("two names", a, 2, true)
}
