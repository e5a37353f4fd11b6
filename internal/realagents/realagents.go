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
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/internal/modroot"
	"github.com/ahp-go/ahp/internal/npmpkg"
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
	npmpkg.RequireNode(tb, "the "+a.Name+" end-to-end tests")
	dir := os.Getenv(Env)
	if dir == "" {
		root, err := modroot.Here()
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
// version is the pinned one.
func install(prefix, bin string, a Agent) error {
	installed := func() bool {
		if _, err := os.Stat(bin); err != nil {
			return false
		}
		b, err := os.ReadFile(filepath.Join(prefix, "node_modules", filepath.FromSlash(a.Package), "package.json"))
		return err == nil && versionIs(b, a.Version)
	}
	if err := npmpkg.Install(prefix, a.Package+"@"+a.Version, installed); err != nil {
		return err
	}
	if !installed() {
		return fmt.Errorf("npm installed %s but %s is missing", a.Package, bin)
	}
	return nil
}
