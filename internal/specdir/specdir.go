// Package specdir finds the AHP protocol reference packs (schemas, data
// tables and conformance fixtures) for generators and tests.
//
// Two packs are used: the 1.x pack (spec-1.1), which the wire types and
// tables are generated from, and the 0.8.0 pack (spec), which holds the
// reducer fixtures and the shapes of the older versions ahpd serves. What
// the generators and tests read of them is kept in the module, under
// testdata/spec, with the upstream licence and without the schemas' prose;
// internal/gen/specsync refreshes that copy from ../shared beside the
// module.
package specdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/internal/modroot"
)

// A Pack names one reference pack.
type Pack struct {
	folder string // folder name beside the module
	env    string // environment variable that overrides the location
}

var (
	// V1 is the protocol 1.x pack (1.1.0), the source of the wire types.
	V1 = Pack{folder: "spec-1.1", env: "AHP_SPEC_1_DIR"}
	// V0 is the 0.8.0 pack: spec pages, reducer fixtures, older shapes.
	V0 = Pack{folder: "spec", env: "AHP_SPEC_DIR"}
)

// Env names the environment variable that points at the 0.8.0 pack.
const Env = "AHP_SPEC_DIR"

// Env reports the environment variable that moves the pack.
func (p Pack) Env() string { return p.env }

// Dir returns the pack's folder: the pack's environment variable when set,
// else the copy kept in the module at testdata/spec/<folder> (made by
// internal/gen/specsync), found from the working directory. It does not
// check that the folder exists.
func (p Pack) Dir() (string, error) {
	if d := os.Getenv(p.env); d != "" {
		return d, nil
	}
	root, err := modroot.Here()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "spec", p.folder), nil
}

// Upstream returns the folder the pack is copied from: the pack's
// environment variable when set, else ../shared/<folder> beside the
// module root.
func (p Pack) Upstream() (string, error) {
	if d := os.Getenv(p.env); d != "" {
		return d, nil
	}
	root, err := modroot.Here()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(root), "shared", p.folder), nil
}

// ForTest returns the pack's folder joined with elem, for conformance
// tests. When the folder is missing the test is skipped, except under
// CI=true where it fails: CI must never pass by skipping the conformance
// suite.
func (p Pack) ForTest(tb testing.TB, elem ...string) string {
	tb.Helper()
	d, err := p.Dir()
	if err == nil {
		d = filepath.Join(append([]string{d}, elem...)...)
		_, err = os.Stat(d)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("protocol reference not found (%v); set %s", err, p.env)
		}
		tb.Skipf("protocol reference not found (%v); set %s to run", err, p.env)
	}
	return d
}

// Dir returns the 0.8.0 pack's folder (see [Pack.Dir]).
func Dir() (string, error) { return V0.Dir() }

// ForTest returns a path in the 0.8.0 pack (see [Pack.ForTest]).
func ForTest(tb testing.TB, elem ...string) string {
	tb.Helper()
	return V0.ForTest(tb, elem...)
}
