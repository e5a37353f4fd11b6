// Package modroot finds the root of the Go module a program runs in: the
// nearest directory holding go.mod, for generators and tests that read or
// install files beside the module.
package modroot

import (
	"fmt"
	"os"
	"path/filepath"
)

// Find returns the nearest directory at or above dir holding a go.mod file.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
		d = parent
	}
}

// Here returns the module root found from the working directory.
func Here() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return Find(wd)
}
