// Package tsagent finds, and installs on first use, the example agent of
// the TypeScript ACP SDK (@agentclientprotocol/sdk), an ACP agent this
// project did not write, for the interop tests.
//
// The package is installed with npm into .cache/acp-sdk at the module
// root (ignored by git), or taken from $AHP_ACP_TS_SDK, which .ci/run sets
// after installing it itself.
package tsagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Version is the SDK release the tests run.
const Version = "1.9.0"

// Env names the folder of an installed @agentclientprotocol/sdk.
const Env = "AHP_ACP_TS_SDK"

// Find returns the node binary and the example agent's script. When node
// is missing the test is skipped, except under CI=true, where it fails.
// When the SDK is missing it is installed with npm; if that fails the
// test fails under CI and is skipped otherwise, with the reason.
func Find(tb testing.TB) (node, script string) {
	tb.Helper()
	ci := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		if ci {
			tb.Fatal("node is required for the ACP interop test in CI")
		}
		tb.Skip("node is not installed")
	}
	dir := os.Getenv(Env)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			tb.Fatal(err)
		}
		prefix := filepath.Join(root, ".cache", "acp-sdk")
		dir = filepath.Join(prefix, "node_modules", "@agentclientprotocol", "sdk")
		if err := install(prefix, dir); err != nil {
			if ci {
				tb.Fatalf("installing the TypeScript ACP SDK: %v", err)
			}
			tb.Skipf("the TypeScript ACP SDK is not installed and npm could not install it (%v); run\n"+
				"\tnpm install --prefix .cache/acp-sdk @agentclientprotocol/sdk@%s", err, Version)
		}
	}
	script = filepath.Join(dir, "dist", "examples", "agent.js")
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("the TypeScript ACP SDK example agent is missing: %v", err)
	}
	return node, script
}

// install runs npm into prefix unless dir already holds the package. A
// lock file keeps test binaries running in parallel from installing at
// the same time.
func install(prefix, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "dist", "examples", "agent.js")); err == nil {
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
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, "dist", "examples", "agent.js")); err == nil {
		return nil // installed while we waited
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm is not installed")
	}
	cmd := exec.Command(npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", "@agentclientprotocol/sdk@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install: %w\n%s", err, out)
	}
	return nil
}

// moduleRoot finds the folder holding go.mod above the working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("no go.mod above " + wd)
		}
	}
}
