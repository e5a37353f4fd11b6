package workspace_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// notServed are the client requests ahpd answers -32601 on purpose, at
// every version (docs/host.md, "Not served").
var notServed = map[string]bool{
	"createTcpConnection":              true,
	"listAutomationTriggerDefinitions": true,
	"runAutomation":                    true,
	"fetchAutomationRuns":              true,
}

// TestMethodsByVersion: every client request of the method table, at a
// version before 1.x and at the newest, is either served (any answer but
// -32601) or refused with -32601: those the host does not serve, and at
// 0.8.0 those the 0.8.0 pack does not list.
func TestMethodsByVersion(t *testing.T) {
	s := startHost(t, nil, nil)
	for _, version := range []string{"0.5.1", "0.8.0", "1.0.0", "1.1.0"} {
		c := s.Dial(t, "v"+version)
		var res protocol.InitializeResult
		c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{version}, ClientID: c.ID}, &res)
		if res.ProtocolVersion != version {
			t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
		}
		v, _ := protocol.ParseVersion(version)
		// initialize advertises what is served: completions with their
		// trigger characters, no automations, no TCP connections.
		if res.Automations != nil || res.TCPConnections != nil || res.TerminalCommandPrefix != nil {
			t.Errorf("%s: initialize advertises what is not served: %+v", version, res)
		}
		if !v.Legacy() && !slices.Equal(res.CompletionTriggerCharacters, []string{"@", "/"}) {
			t.Errorf("%s: completionTriggerCharacters %v", version, res.CompletionTriggerCharacters)
		}
		for _, m := range protocol.Methods() {
			if !m.FromClient || m.Notification {
				continue
			}
			want := !notServed[m.Name] && (m.Legacy || !v.Legacy())
			t.Run(fmt.Sprintf("%s/%s", version, m.Name), func(t *testing.T) {
				err := c.Call(m.Name, map[string]any{"channel": "ahp-session:/absent"}, nil)
				got := err == nil || rpcCode(t, err).Code != protocol.CodeMethodNotFound
				if got != want {
					t.Errorf("served = %v (%v), want %v", got, err, want)
				}
			})
		}
		if err := c.Call("noSuchMethod", map[string]any{}, nil); rpcCode(t, err).Code != protocol.CodeMethodNotFound {
			t.Errorf("an unknown method: %v", err)
		}
	}
}
