// Package fileinfo names file types and counts hard links, for the places
// that refuse to serve anything but a regular file with a single name: the
// ACP fs/* methods (agent/acp) and the resource* commands and resource
// watches (workspace/files).
package fileinfo

import "io/fs"

// Kind names the type of a file that is not regular, for error messages:
// "a directory", "a named pipe", "a socket", "a device", "a symbolic link".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file (" + m.Type().String() + ")"
}
