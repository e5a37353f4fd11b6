package host_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// TestReconnectUnknownClient: after a restart the host no longer knows a
// client; its reconnect gets fresh snapshots of the channels it names that
// exist (lifecycle.md), in the version it names in _meta when the host
// speaks it, else in the host's newest, and the connection works on.
func TestReconnectUnknownClient(t *testing.T) {
	st := store.NewMemory()
	h := pipeHost(t, &host.Options{Store: st})
	c := pipeDial(t, h)
	c.initialize("old", "0.8.0")
	session := "echo:/s1"
	c.must("createSession", &protocol.CreateSessionParams{Channel: session}, nil)
	chat := *c.subscribe(session).State.(*protocol.SessionState).DefaultChat
	c.conn.Close()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h2 := pipeHost(t, &host.Options{Store: st})

	meta := func(versions string) map[string]jsontext.Value {
		if versions == "" {
			return nil
		}
		return map[string]jsontext.Value{host.ReconnectVersionsMeta: jsontext.Value(versions)}
	}
	tests := []struct {
		name     string
		meta     map[string]jsontext.Value
		want     protocol.ErrorCode
		modern   bool // the chat snapshot in 1.x shapes (ChatState.movable)
		lastSeen int64
	}{
		{"no versions: the newest", nil, 0, true, 5},
		{"its version", meta(`["0.8.0"]`), 0, false, 5},
		{"the newest shared", meta(`["7.0.0","1.1.0","0.8.0"]`), 0, true, 5},
		{"a 1.x baseline", meta(`["0.9.0"]`), 0, true, 1 << 40},
		{"an unreadable list", meta(`{"x":1}`), 0, true, 0},
		{"no version shared", meta(`["7.0.0"]`), protocol.CodeInvalidRequest, false, 5},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each subtest is a client of the first host, which the
			// second never saw.
			id := fmt.Sprintf("old-%d", i)
			c := pipeDial(t, h2)
			var raw jsontext.Value
			err := c.call("reconnect", &protocol.ReconnectParams{Meta: tt.meta, ClientID: id, LastSeenServerSeq: tt.lastSeen,
				Subscriptions: []string{protocol.RootURI, session, chat, "echo:/gone", "ahp-chat:/gone"}}, &raw)
			if got := rpcCode(err); got != tt.want {
				t.Fatalf("reconnect: %v, want code %d", err, tt.want)
			}
			if tt.want != 0 {
				return
			}
			res, err := protocol.UnmarshalReconnectResult(raw)
			if err != nil {
				t.Fatal(err)
			}
			snaps, ok := res.(*protocol.ReconnectSnapshotResult)
			if !ok {
				t.Fatalf("reconnect answered %T, want snapshots", res)
			}
			var got []string
			for _, s := range snaps.Snapshots {
				got = append(got, s.Resource)
			}
			if want := []string{protocol.RootURI, session, chat}; !equalStrings(got, want) {
				t.Fatalf("snapshots of %v, want %v", got, want)
			}
			if modern := bytes.Contains(raw, []byte(`"movable"`)); modern != tt.modern {
				t.Errorf("chat snapshot in 1.x shapes: %v, want %v (%s)", modern, tt.modern, raw)
			}
			// The connection is subscribed and works on.
			c.must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI(id)}, nil)
			if s := c.subscribe(session); s.State.(*protocol.SessionState).Provider != "echo" {
				t.Errorf("session after reconnect: %+v", s.State)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
