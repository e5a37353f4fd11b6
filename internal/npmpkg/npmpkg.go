// Package npmpkg installs npm packages on first use for tests that run
// programs this project did not write (the TypeScript ACP SDK's example
// agent, the real coding agents). Packages go into a prefix folder under
// the module root's .cache (ignored by git); an install lock keeps test
// binaries running in parallel from installing into one prefix at once.
package npmpkg

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/internal/filelock"
)

// RequireNode returns the node binary. When node is missing the test is
// skipped, except under CI=true, where it fails with "node is required
// for <purpose> in CI".
func RequireNode(tb testing.TB, purpose string) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("node is required for %s in CI", purpose)
		}
		tb.Skip("node is not installed")
	}
	return node
}

// Install runs `npm install spec` into prefix unless installed reports
// the package already there, checking again once it holds prefix's
// install lock (another test binary may have installed it meanwhile).
func Install(prefix, spec string, installed func() bool) error {
	if installed() {
		return nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(prefix, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := filelock.Lock(lock); err != nil {
		return err
	}
	defer filelock.Unlock(lock)
	if installed() {
		return nil // installed while we waited
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm is not installed")
	}
	cmd := exec.Command(npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", spec)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install: %w\n%s", err, out)
	}
	return nil
}
