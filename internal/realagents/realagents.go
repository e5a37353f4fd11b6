// Package realagents finds, and installs on first use, the ACP agents
// users run (Claude Code, Codex and Gemini CLI) at pinned versions, and
// configures each to run offline against a scripted model server
// (package modelserver) in a home folder of its own. Its tests run them
// end to end through a host.
//
// The packages are installed with npm into .cache/agents/NAME at the
// module root (ignored by git), or taken from $AHP_REAL_AGENTS, a folder
// holding NAME/node_modules for each, which .ci/run sets after
// installing them itself.
package realagents

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Env names the folder holding the installed agents.
const Env = "AHP_REAL_AGENTS"

// Agent is one agent package and the program it installs.
type Agent struct {
	// Name is the folder under .cache/agents and the ACP agent's name.
	Name string
	// Package and Version are the npm package and its pinned release.
	Package, Version string
	// Bin is the program in node_modules/.bin.
	Bin string
	// Args are the arguments that make it speak ACP.
	Args []string
}

// The agents, pinned.
var (
	Claude = Agent{Name: "claude", Package: "@agentclientprotocol/claude-agent-acp", Version: "0.101.0", Bin: "claude-agent-acp"}
	Codex  = Agent{Name: "codex", Package: "@agentclientprotocol/codex-acp", Version: "2.6.0", Bin: "codex-acp"}
	Gemini = Agent{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini", Args: []string{"--acp"}}
)

// Find returns the agent's program. When node is missing the test is
// skipped, except under CI=true, where it fails. When the package is
// missing it is installed with npm; if that fails (the registry cannot be
// reached) the test fails under CI and is skipped otherwise, with the
// reason.
func Find(tb testing.TB, a Agent) string {
	tb.Helper()
	ci := os.Getenv("CI") == "true"
	if _, err := exec.LookPath("node"); err != nil {
		if ci {
			tb.Fatalf("node is required for the %s end-to-end tests in CI", a.Name)
		}
		tb.Skip("node is not installed")
	}
	dir := os.Getenv(Env)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(root, ".cache", "agents")
	}
	prefix := filepath.Join(dir, a.Name)
	bin := filepath.Join(prefix, "node_modules", ".bin", a.Bin)
	if err := install(prefix, bin, a); err != nil {
		if ci {
			tb.Fatalf("installing %s: %v", a.Package, err)
		}
		tb.Skipf("%s is not installed and npm could not install it (%v); run\n"+
			"\tnpm install --prefix %s %s@%s", a.Package, err, prefix, a.Package, a.Version)
	}
	return bin
}

// install runs npm into prefix unless bin is there and the installed
// version is the pinned one. A lock file keeps test binaries running in
// parallel from installing at the same time.
func install(prefix, bin string, a Agent) error {
	installed := func() bool {
		if _, err := os.Stat(bin); err != nil {
			return false
		}
		b, err := os.ReadFile(filepath.Join(prefix, "node_modules", filepath.FromSlash(a.Package), "package.json"))
		return err == nil && versionIs(b, a.Version)
	}
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
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed() {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm is not installed")
	}
	cmd := exec.Command(npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", a.Package+"@"+a.Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install: %w\n%s", err, out)
	}
	if !installed() {
		return fmt.Errorf("npm installed %s but %s is missing", a.Package, bin)
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
