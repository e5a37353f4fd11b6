// Package specdir finds the AHP protocol reference folder (schemas, data
// tables and conformance fixtures) for generators and tests.
package specdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Env names the environment variable that points at the spec folder.
const Env = "AHP_SPEC_DIR"

// Dir returns the spec folder: $AHP_SPEC_DIR when set, else
// ../shared/spec beside the module root found from the working directory.
// It does not check that the folder exists.
func Dir() (string, error) {
	if d := os.Getenv(Env); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "spec"), nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("specdir: no go.mod above " + wd)
		}
	}
}

// ForTest returns the spec folder joined with elem, for conformance tests.
// When the folder is missing the test is skipped, except under CI=true where
// it fails: CI must never pass by skipping the conformance suite.
func ForTest(tb testing.TB, elem ...string) string {
	tb.Helper()
	d, err := Dir()
	if err == nil {
		d = filepath.Join(append([]string{d}, elem...)...)
		_, err = os.Stat(d)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("protocol reference not found (%v); set %s", err, Env)
		}
		tb.Skipf("protocol reference not found (%v); set %s to run", err, Env)
	}
	return d
}
