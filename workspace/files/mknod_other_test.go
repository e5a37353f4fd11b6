//go:build unix && !linux

package files

import "errors"

// mknodNull would make a device node; device numbers differ between
// systems, so the test checks a link to a device instead.
func mknodNull(string) error { return errors.New("device nodes are made on Linux only") }
