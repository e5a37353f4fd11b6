package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/protocol"
)

// TestSignInKeptInDataDir: a key a client signs an agent in with is kept
// in <data dir>/credentials.json, readable by its owner only, and an ahpd
// started later on the same data directory finds the agent ready.
func TestSignInKeptInDataDir(t *testing.T) {
	const key = "sk-ahpd-3141"
	t.Setenv(acptest.AgentEnv, "1")
	t.Setenv(acptest.AuthMethodsEnv, "key")
	t.Setenv(acptest.RequireKeyEnv, key)
	data := t.TempDir()
	agentFlag := "keyed=" + os.Args[0] + " -test.run=^$"
	url := runAhpd(t, "--store", "memory", "--data-dir", data, "--agent", agentFlag, "--no-echo")
	a := dialClient(t, url, "a")
	var init protocol.InitializeResult
	a.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "a", InitialSubscriptions: []string{protocol.RootURI}}, &init)
	agents := probedAgents(t, a, init.Snapshots[0].State.(*protocol.RootState).Agents, "ACP test agent")
	if len(agents) != 1 || !strings.HasPrefix(agents[0].Description, "Needs sign-in: ") || len(agents[0].ProtectedResources) != 1 {
		t.Fatalf("agents before signing in: %+v", agents)
	}
	a.call(t, "authenticate", &protocol.AuthenticateParams{Resource: agents[0].ProtectedResources[0].Resource, Token: key}, nil)
	path := filepath.Join(data, "credentials.json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", path, err, st)
	}

	url2 := runAhpd(t, "--store", "memory", "--data-dir", data, "--agent", agentFlag, "--no-echo")
	b := dialClient(t, url2, "b")
	b.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "b", InitialSubscriptions: []string{protocol.RootURI}}, &init)
	agents = probedAgents(t, b, init.Snapshots[0].State.(*protocol.RootState).Agents, "ACP test agent")
	if len(agents) != 1 || strings.HasPrefix(agents[0].Description, "Needs") || *agents[0].ProtectedResources[0].Required {
		t.Fatalf("agents after a restart: %+v", agents)
	}
}
