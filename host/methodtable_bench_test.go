package host_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// BenchmarkMethodTable measures one request through the method table over
// an in-memory pipe: looked up, checked against the connection's state and
// version, decoded and handed to a handler that answers at once (an error
// or nothing), for the host's entries and the workspace's.
func BenchmarkMethodTable(b *testing.B) {
	h, err := host.New(&host.Options{Workspace: workspace.New(nil)})
	if err != nil {
		b.Fatal(err)
	}
	c := hosttest.ServePipe(b, h).Dial(b, "bench")
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: c.ID}, nil)
	for _, bc := range []struct {
		name, method, params string
		code                 protocol.ErrorCode // 0: a success
	}{
		{"host-anytime", "ping", `{"channel":"ahp-root://"}`, 0},
		{"host-locked", "subscribe", `{"channel":"ahp-session:/none"}`, protocol.CodeNotFound},
		{"workspace", "resourceRead", `{"channel":"ahp-root://","uri":"file:///nowhere/x"}`, protocol.CodePermissionDenied},
		{"not-served", "createTcpConnection", `{"channel":"ahp-root://","host":"h","port":1}`, protocol.CodeMethodNotFound},
	} {
		b.Run(bc.name, func(b *testing.B) {
			params := jsontext.Value(bc.params)
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Call(bc.method, params, nil); rpcCode(err) != bc.code {
					b.Fatalf("%s: %v", bc.method, err)
				}
			}
		})
	}
}
