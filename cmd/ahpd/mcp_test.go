package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigMCPServers: the config file's top-level mcpServers go to every
// ACP agent, an agent's own server of the same name replacing the shared
// one; bad declarations are refused.
func TestConfigMCPServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want map[string][]string // agent → its servers' names, in order
		err  string
	}{
		{"shared and own", `{
			"mcpServers": [{"name": "docs", "url": "https://docs.test/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
			               {"name": "files", "command": "mcp-files"}],
			"agents": [{"name": "a", "command": "agent-a"},
			           {"name": "b", "command": "agent-b", "mcpServers": [{"name": "files", "command": "other-files", "env": {"ROOT": "$HOME"}}, {"name": "git", "command": "mcp-git"}]}]
		}`, map[string][]string{"a": {"docs", "files"}, "b": {"docs", "files", "git"}}, ""},
		{"bad shared server", `{"mcpServers": [{"name": "x"}], "agents": [{"name": "a", "command": "agent-a"}]}`, nil, "needs a command"},
		{"bad own server", `{"agents": [{"name": "a", "command": "agent-a", "mcpServers": [{"name": "x", "type": "ws", "url": "http://h"}]}]}`, nil, "unknown type"},
		{"reserved name", `{"agents": [{"name": "a", "command": "agent-a", "mcpServers": [{"name": "ahp-clients", "command": "x"}]}]}`, nil, "ahpd's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c agentConfig
			dec := json.NewDecoder(strings.NewReader(tc.file))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatal(err)
			}
			err := c.validate()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("validate() = %v, want an error about %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range c.Agents {
				var names []string
				for _, m := range a.MCPServers {
					names = append(names, m.Name)
				}
				if strings.Join(names, ",") != strings.Join(tc.want[a.Name], ",") {
					t.Errorf("agent %s has servers %v, want %v", a.Name, names, tc.want[a.Name])
				}
				if a.Name == "b" && a.MCPServers[1].Command != "other-files" {
					t.Errorf("agent b's own files server was replaced: %+v", a.MCPServers[1])
				}
			}
			// Validating again (ahpd --check, then the start) changes nothing.
			if err := c.validate(); err != nil || len(c.Agents[1].MCPServers) != 3 {
				t.Fatalf("second validate: %v, %d servers", err, len(c.Agents[1].MCPServers))
			}
		})
	}
}
