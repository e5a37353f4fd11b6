// Package tsagent finds, and installs on first use, the example agent of
// the TypeScript ACP SDK (@agentclientprotocol/sdk), an ACP agent this
// project did not write, for the interop tests.
//
// The package is installed with npm into .cache/acp-sdk at the module
// root (ignored by git), or taken from $AHP_ACP_TS_SDK, which .ci/run sets
// after installing it itself.
package tsagent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/internal/modroot"
	"github.com/ahp-go/ahp/internal/npmpkg"
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
	node = npmpkg.RequireNode(tb, "the ACP interop test")
	dir := os.Getenv(Env)
	if dir == "" {
		root, err := modroot.Here()
		if err != nil {
			tb.Fatal(err)
		}
		prefix := filepath.Join(root, ".cache", "acp-sdk")
		dir = filepath.Join(prefix, "node_modules", "@agentclientprotocol", "sdk")
		installed := func() bool {
			_, err := os.Stat(filepath.Join(dir, "dist", "examples", "agent.js"))
			return err == nil
		}
		if err := npmpkg.Install(prefix, "@agentclientprotocol/sdk@"+Version, installed); err != nil {
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
