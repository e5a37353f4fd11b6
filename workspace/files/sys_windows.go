//go:build windows

package files

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// openDir opens a directory for listing. Windows has no O_DIRECTORY and
// opens files and directories alike, so what was opened is checked, and
// anything but a directory fails with ENOTDIR, as on Unix. (Windows has
// no FIFOs to block the open.)
func openDir(root *os.Root, rel string) (*os.File, error) {
	d, err := root.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, err
	}
	if !fi.IsDir() {
		d.Close()
		return nil, &fs.PathError{Op: "open", Path: rel, Err: syscall.ENOTDIR}
	}
	return d, nil
}

// fileIdentity is the part of an ETag that tells a file from another one
// put in its place. A Windows FileInfo carries no file index, so it is the
// creation time, which a new file gets anew.
func fileIdentity(fi fs.FileInfo) uint64 {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return uint64(d.CreationTime.Nanoseconds())
	}
	return 0
}

// sysErr maps the Windows errors osErr classifies to the errno values it
// looks for; others are returned as they are.
func sysErr(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case windows.ERROR_DIR_NOT_EMPTY:
		return syscall.ENOTEMPTY
	case windows.ERROR_DIRECTORY:
		return syscall.ENOTDIR
	case windows.ERROR_CANT_RESOLVE_FILENAME:
		return syscall.ELOOP
	}
	return err
}
