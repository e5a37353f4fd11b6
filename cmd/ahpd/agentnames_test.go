package main

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent/acp"
)

// TestAgentNamesAreSchemes: an agent's name is its provider, the scheme of
// its sessions' URIs (<provider>:/<id>), so names that cannot be one are
// refused when the agent is declared.
func TestAgentNamesAreSchemes(t *testing.T) {
	tests := []struct {
		name string
		want string // "" for ok, else a part of the error
	}{
		{"claude", ""},
		{"gemini-cli", ""},
		{"codex.v2", ""},
		{"Claude", "upper-case"},
		{"my_agent", "not a valid URI scheme"},
		{"2agent", "not a valid URI scheme"},
		{"ahp-session", "clashes"},
		{"file", "clashes"},
	}
	for _, tt := range tests {
		c := agentConfig{Agents: []acp.Config{{Name: tt.name, Command: "true"}}}
		err := c.validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.want)
		}
	}
}
