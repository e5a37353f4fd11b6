package reducer_test

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// Root actions: specification/root-channel.md, "Actions".
func TestRoot(t *testing.T) {
	agent := `{"provider":"copilot","displayName":"Copilot","description":"AI","models":[]}`
	config := `"config":{"schema":{"type":"object","properties":{"theme":{"type":"string","title":"Theme","enum":["light","dark"]}}},"values":{"theme":"light","locale":"en"}}`
	runChannelCases(t, "RootState", []channelCase{{
		name:    "agentsChanged replaces the list, also with an empty one",
		initial: `{"agents":[` + agent + `]}`,
		actions: []string{`{"type":"root/agentsChanged","agents":[]}`},
		want:    `{"agents":[]}`,
	}, {
		name:    "activeSessionsChanged keeps a count of zero",
		initial: `{"agents":[],"activeSessions":4}`,
		actions: []string{`{"type":"root/activeSessionsChanged","activeSessions":0}`},
		want:    `{"agents":[],"activeSessions":0}`,
	}, {
		name:    "terminalsChanged replaces the whole catalogue",
		initial: `{"agents":[],"terminals":[{"resource":"agenthost:/terminal/1","title":"bash","claim":{"kind":"client","clientId":"c1"}}]}`,
		actions: []string{`{"type":"root/terminalsChanged","terminals":[]}`},
		want:    `{"agents":[],"terminals":[]}`,
	}, {
		name:    "configChanged merges values and keeps the schema",
		initial: `{"agents":[],` + config + `}`,
		actions: []string{`{"type":"root/configChanged","config":{"theme":"dark","extra":true}}`},
		want:    `{"agents":[],"config":{"schema":{"type":"object","properties":{"theme":{"type":"string","title":"Theme","enum":["light","dark"]}}},"values":{"theme":"dark","locale":"en","extra":true}}}`,
	}, {
		name:    "configChanged with replace false merges",
		initial: `{"agents":[],` + config + `}`,
		actions: []string{`{"type":"root/configChanged","config":{"theme":"dark"},"replace":false}`},
		want:    `{"agents":[],"config":{"schema":{"type":"object","properties":{"theme":{"type":"string","title":"Theme","enum":["light","dark"]}}},"values":{"theme":"dark","locale":"en"}}}`,
	}, {
		name:    "configChanged without a config returns the same state",
		initial: `{"agents":[]}`,
		actions: []string{`{"type":"root/configChanged","config":{"theme":"dark"},"replace":true}`},
		want:    `{"agents":[]}`,
		same:    true,
	}, {
		name:    "an action of another channel returns the same state",
		initial: `{"agents":[]}`,
		actions: []string{`{"type":"session/titleChanged","title":"T"}`},
		want:    `{"agents":[]}`,
		same:    true,
	}, {
		name:    "an unknown root action returns the same state",
		initial: `{"agents":[],"activeSessions":1}`,
		actions: []string{`{"type":"root/fromTheFuture","n":2}`},
		want:    `{"agents":[],"activeSessions":1}`,
		same:    true,
	}})
}

func TestRootNilState(t *testing.T) {
	var s *protocol.RootState
	if got := reducer.Root(s, &protocol.RootActiveSessionsChangedAction{ActiveSessions: 1}); got != nil {
		t.Errorf("Root(nil) = %v, want nil", got)
	}
}
