package host_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
)

// FuzzConnectionFrames feeds arbitrary frames (the input split at newlines)
// to one host connection, after an initialize, and checks the host neither
// panics nor stops serving: a ping on a second connection still answers.
func FuzzConnectionFrames(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":2,"method":"createSession","params":{"channel":"ahp-session:/f"}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"channel":"ahp-session:/f"}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-session:/f","clientSeq":1,"action":{"type":"session/titleChanged","title":"x"}}}`,
		`{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-chat:/x","clientSeq":1,"action":{"type":"chat/turnStarted","turnId":"t","startedAt":"x","message":{"text":"/tool","origin":{"kind":"user"}}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"reconnect","params":{"clientId":"c","lastSeenServerSeq":-5,"subscriptions":["ahp-root://","bogus"]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"listSessions","params":{"limit":-1,"cursor":"%%%"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"fetchTurns","params":{"channel":"ahp-chat:/x","cursor":"YmVmb3JlOng"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"subscribe","params":{"channel":"ahp-root://","view":{"turns":-3}}}`,
		"{", "[]", "null", `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}})
	if err != nil {
		f.Fatal(err)
	}
	defer h.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client, server := jsonrpc.Pipe()
		done := make(chan struct{})
		go func() {
			h.ServeTransport(ctx, server)
			close(done)
		}()
		client.Write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"fuzz","initialSubscriptions":["ahp-root://"]}}`))
		for frame := range bytes.SplitSeq(data, []byte("\n")) {
			client.Write(ctx, frame)
		}
		// Drain what the host sends, then hang up.
		go func() {
			for {
				if _, err := client.Read(ctx); err != nil {
					return
				}
			}
		}()
		client.Write(ctx, []byte(`{"jsonrpc":"2.0","id":99,"method":"ping"}`))
		client.Close()
		<-done

		// The host still serves others.
		c2, s2 := jsonrpc.Pipe()
		go h.ServeTransport(ctx, s2)
		c2.Write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		resp, err := c2.Read(ctx)
		if err != nil || !bytes.Contains(resp, []byte(`"result":null`)) {
			t.Fatalf("host stopped answering after %q: %s %v", data, resp, err)
		}
		c2.Close()
	})
}
